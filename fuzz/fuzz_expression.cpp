// Rule expressions: parse arbitrary text; when it parses, evaluate it against a fixed context (a window with NaN
// and inf in it, tags, meta, other metrics) and check the canonical form. Must never crash, hang or read out of
// bounds; the checks below trap on broken invariants.
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/expression.h"

namespace {

struct FixedContext : rldk::EvalContext {
  std::vector<double> values = {0.3, 0.45, std::nan(""), 0.5, 1e300, -0.0, HUGE_VAL, 0.4};
  std::vector<int64_t> steps = {1, 2, 3, 5, 8, 13, 21, 34};
  std::map<std::string, std::string, std::less<>> tags = {{"phase", "train"}, {"seed", "42"}, {"", "empty key"}};
  std::map<std::string, std::string, std::less<>> metas = {{"threshold", "0.35"}, {"word", "abc"}};
  size_t window = 8;  // the last `window` elements (8: all, 1: the latest, 0: empty)

  std::span<const double> window_values() const override { return std::span<const double>(values).last(window); }
  std::span<const int64_t> window_steps() const override { return std::span<const int64_t>(steps).last(window); }
  double time() const override { return 1700000000.0; }
  std::string_view name() const override { return "policy/kl"; }
  std::string_view run_id() const override { return "run-1"; }
  std::optional<std::string_view> tag(std::string_view key) const override { return find(tags, key); }
  std::optional<std::string_view> meta(std::string_view key) const override { return find(metas, key); }
  std::optional<double> metric(std::string_view name) const override {
    if (name == "policy/grad_norm") return 3.0;
    if (name == "nan") return std::nan("");
    return std::nullopt;
  }
  static std::optional<std::string_view> find(const std::map<std::string, std::string, std::less<>>& m,
                                              std::string_view key) {
    auto it = m.find(key);
    if (it == m.end()) return std::nullopt;
    return std::string_view(it->second);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = rldk::Expression::parse(text);
  if (!parsed.ok()) {
    const auto& error = parsed.error();
    if (error.message.empty() || error.context.find("column ") == std::string::npos) __builtin_trap();
    return 0;
  }
  const rldk::Expression& e = parsed.value();
  FixedContext context;
  for (size_t window : {size_t{8}, size_t{1}, size_t{0}}) {
    context.window = window;
    rldk::Value v = e.evaluate(context);
    // A vector result is never longer than the window.
    if (v.is_vector() && v.size() > context.window_values().size()) __builtin_trap();
    // holds() (the monitor's path, with its per-element shortcut) reads the result exactly as all_true() does.
    std::optional<bool> holds = e.holds(context);
    if (holds != (v.is_missing() ? std::nullopt : std::optional<bool>(rldk::all_true(v)))) __builtin_trap();
    (void)rldk::all_true(v);
    (void)rldk::truthy_latest(v);
    (void)rldk::to_string(v);
  }
  // The canonical form reads back, to itself.
  std::string canonical = e.to_string();
  auto again = rldk::Expression::parse(canonical);
  if (!again.ok() || again.value().to_string() != canonical) __builtin_trap();
  if (again.value().uses_window_function() != e.uses_window_function()) __builtin_trap();
  if (again.value().metrics_referenced() != e.metrics_referenced()) __builtin_trap();
  return 0;
}
