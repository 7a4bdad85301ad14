#include "rules/operations.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

namespace rldk::rules {
namespace {


std::optional<double> parse_number(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s == "true" || s == "True") return 1.0;
  if (s == "false" || s == "False") return 0.0;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // from_chars takes '-' but not '+'
  double x = 0.0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (s.empty() || ptr != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return std::nullopt;
  if (ec != std::errc()) return std::nullopt;
  return x;
}

bool truthy(double x) { return x != 0.0 && !std::isnan(x); }

template <class T>
bool holds(CompareOp op, const T& a, const T& b) {
  switch (op) {
    case CompareOp::less: return a < b;
    case CompareOp::less_equal: return a <= b;
    case CompareOp::greater: return a > b;
    case CompareOp::greater_equal: return a >= b;
    case CompareOp::equal: return a == b;
    case CompareOp::not_equal: return a != b;
    case CompareOp::in:
    case CompareOp::not_in: break;  // handled by the evaluator
  }
  return false;
}

}  // namespace

Operand to_numeric(Operand a) {
  if (!a.is_string()) return a;
  std::optional<double> x = parse_number(a.text());
  return x ? Operand::number(*x) : Operand();
}

Operand truth(Operand a) {
  if (a.is_missing()) return Operand::boolean(false);
  if (a.is_string()) return Operand::boolean(!a.text().empty());
  if (a.is_boolean_kind()) return a;
  return map_elements(a, true, truthy);
}

double python_modulo(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0.0 && ((r < 0.0) != (y < 0.0))) r += y;
  return r;
}

Operand arithmetic(NodeKind kind, Operand a, Operand b) {
  a = to_numeric(std::move(a));
  b = to_numeric(std::move(b));
  if (a.is_missing() || b.is_missing()) return {};
  switch (kind) {
    case NodeKind::add: return zip_elements(a, b, false, [](double x, double y) { return x + y; });
    case NodeKind::subtract: return zip_elements(a, b, false, [](double x, double y) { return x - y; });
    case NodeKind::multiply: return zip_elements(a, b, false, [](double x, double y) { return x * y; });
    case NodeKind::divide: return zip_elements(a, b, false, [](double x, double y) { return x / y; });
    case NodeKind::modulo: return zip_elements(a, b, false, python_modulo);
    case NodeKind::power: return zip_elements(a, b, false, [](double x, double y) { return std::pow(x, y); });
    default: return {};
  }
}

bool compare_numbers(CompareOp op, double a, double b) { return holds(op, a, b); }

Operand compare(CompareOp op, const Operand& a, const Operand& b) {
  if (a.is_missing() || b.is_missing()) return Operand::boolean(false);
  if (a.is_string() && b.is_string()) return Operand::boolean(holds(op, a.text(), b.text()));
  if (a.is_string() || b.is_string()) {
    // A string against a number: compare as numbers when the string is one, else the two are simply unequal.
    const Operand& s = a.is_string() ? a : b;
    if (!parse_number(s.text())) return Operand::boolean(op == CompareOp::not_equal);
    Operand converted = to_numeric(Operand::string(s.text()));
    const Operand& left = a.is_string() ? converted : a;
    const Operand& right = b.is_string() ? converted : b;
    return zip_elements(left, right, true, [op](double p, double q) { return holds(op, p, q); });
  }
  return zip_elements(a, b, true, [op](double p, double q) { return holds(op, p, q); });
}

Operand logical(bool is_and, const Operand& a, const Operand& b) {
  if (is_and) return zip_elements(a, b, true, [](double x, double y) { return x != 0.0 && y != 0.0; });
  return zip_elements(a, b, true, [](double x, double y) { return x != 0.0 || y != 0.0; });
}

}  // namespace rldk::rules
