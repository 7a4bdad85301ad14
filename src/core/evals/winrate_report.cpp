// `rldk evals winrate`: pairwise judge results (preference for B, lengths or outputs of both) read from a table, and
// the raw and length-controlled win rate per task (length_controlled.cpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "report/markdown_text.h"
#include "rldk/evals.h"
#include "samples/cell_sink.h"

namespace rldk::evals {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

double words(std::string_view text) {
  double n = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    bool space = std::isspace(c) != 0;
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

enum class Role { none, preference, length_a, length_b, output_a, output_b, task };

Role role_of(const std::string& name, const JudgeColumns& m) {
  auto is = [&](const std::string& mapped, std::initializer_list<std::string_view> names) {
    if (!mapped.empty()) return name == mapped;
    return std::find(names.begin(), names.end(), lower(name)) != names.end();
  };
  if (is(m.preference, {"preference", "pref", "win", "winner", "label", "judge_preference", "b_wins"})) {
    return Role::preference;
  }
  if (is(m.length_a, {"length_a", "len_a", "tokens_a", "words_a"})) return Role::length_a;
  if (is(m.length_b, {"length_b", "len_b", "tokens_b", "words_b"})) return Role::length_b;
  if (is(m.output_a, {"output_a", "response_a", "completion_a", "answer_a"})) return Role::output_a;
  if (is(m.output_b, {"output_b", "response_b", "completion_b", "answer_b"})) return Role::output_b;
  if (is(m.task, {"task", "benchmark", "dataset", "category"})) return Role::task;
  return Role::none;
}

class JudgeAssembler final : public samples::CellSink {
 public:
  explicit JudgeAssembler(const JudgeColumns& columns) : mapping_(columns) {}

  Status begin_file(const std::string& path, const std::vector<samples::FileColumn>& columns,
                    std::optional<int64_t>, const std::string&) override {
    roles_.clear();
    names_.clear();
    bool pref = false, lengths = false, outputs = false;
    int la = 0, lb = 0, oa = 0, ob = 0;
    for (const auto& c : columns) {
      Role r = role_of(c.name, mapping_);
      roles_.push_back(r);
      names_.push_back(c.name);
      pref |= r == Role::preference;
      la += r == Role::length_a;
      lb += r == Role::length_b;
      oa += r == Role::output_a;
      ob += r == Role::output_b;
    }
    lengths = la > 0 && lb > 0;
    outputs = oa > 0 && ob > 0;
    if (!pref) {
      return Error{ErrorCode::unrecognized,
                   "no preference column (looked for preference, win, winner, label; name one with "
                   "--preference-col)",
                   path};
    }
    if (!lengths && !outputs) {
      return Error{ErrorCode::unrecognized,
                   "no lengths (length_a and length_b) and no outputs (output_a and output_b) of the two sides",
                   path};
    }
    use_lengths_ = lengths;
    unit = lengths ? "given" : "words";
    clear();
    return Ok{};
  }
  int column_index(std::string_view name) const override { return samples::position_of(names_, name); }
  int add_column(const samples::FileColumn& column) override {
    roles_.push_back(role_of(column.name, mapping_));
    names_.push_back(column.name);
    return static_cast<int>(roles_.size() - 1);
  }
  void set_text(int column, std::string_view text) override {
    switch (role(column)) {
      case Role::preference: {
        std::string t = lower(text);
        if (t == "b" || t == "model_b" || t == "2") pref_ = 1;
        else if (t == "a" || t == "model_a" || t == "1") pref_ = 0;
        else if (t == "tie" || t == "draw" || t == "0.5") pref_ = 0.5;
        break;
      }
      case Role::output_a: len_a_text_ = words(text); break;
      case Role::output_b: len_b_text_ = words(text); break;
      case Role::task: task_.assign(text); break;
      default: break;
    }
  }
  void set_number(int column, double value) override {
    switch (role(column)) {
      case Role::preference: pref_ = value; break;
      case Role::length_a: len_a_ = value; break;
      case Role::length_b: len_b_ = value; break;
      case Role::task: task_ = std::to_string(static_cast<int64_t>(value)); break;
      default: break;
    }
  }
  void end_row(uint64_t) override {
    ++rows_;
    double a = use_lengths_ ? len_a_ : len_a_text_, b = use_lengths_ ? len_b_ : len_b_text_;
    if (std::isfinite(pref_) && pref_ >= 0 && pref_ <= 1 && std::isfinite(a) && std::isfinite(b)) {
      auto& t = by_task[task_.empty() ? "all" : task_];
      t.first.push_back(pref_);
      t.second.push_back(b - a);
    } else {
      ++skipped;
    }
    clear();
  }
  uint64_t rows() const override { return rows_; }

  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_task;
  size_t skipped = 0;
  std::string unit;

 private:
  Role role(int column) const {
    return column >= 0 && static_cast<size_t>(column) < roles_.size() ? roles_[static_cast<size_t>(column)]
                                                                       : Role::none;
  }
  void clear() {
    pref_ = len_a_ = len_b_ = len_a_text_ = len_b_text_ = NA;
    task_.clear();
  }

  const JudgeColumns& mapping_;
  std::vector<Role> roles_;
  std::vector<std::string> names_;
  bool use_lengths_ = true;
  double pref_ = NA, len_a_ = NA, len_b_ = NA, len_a_text_ = NA, len_b_text_ = NA;
  std::string task_;
  uint64_t rows_ = 0;
};

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json interval_json(const Interval& i) {
  Json j = Json::Object{};
  j["estimate"] = number(i.estimate);
  j["low"] = number(i.low);
  j["high"] = number(i.high);
  j["note"] = i.note;
  return j;
}

std::string fmt(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string interval_text(const Interval& i) {
  return fmt(i.estimate) + " [" + fmt(i.low) + ", " + fmt(i.high) + "]";
}

}  // namespace

Result<WinRateReport> length_controlled_report(const std::vector<std::string>& sources, const JudgeColumns& columns,
                                               const BootstrapOptions& options, Diagnostics& diagnostics) {
  JudgeAssembler judge(columns);
  for (const auto& source : sources) {
    Status status = samples::read_table(source, judge, diagnostics);
    if (!status.ok()) return status.error();
  }
  if (judge.by_task.empty()) return Error{ErrorCode::invalid_argument, "no judged item could be read", ""};
  WinRateReport r;
  r.sources = sources;
  r.length_unit = judge.unit;
  r.skipped = judge.skipped;
  r.confidence = options.confidence;
  if (judge.by_task.size() > 1) {
    std::vector<double> pref, diff;
    for (const auto& [task, values] : judge.by_task) {
      pref.insert(pref.end(), values.first.begin(), values.first.end());
      diff.insert(diff.end(), values.second.begin(), values.second.end());
    }
    r.tasks.push_back({"all", length_controlled_win_rate(pref, diff, options)});
  }
  for (const auto& [task, values] : judge.by_task) {
    r.tasks.push_back({task, length_controlled_win_rate(values.first, values.second, options)});
  }
  return r;
}

Json winrate_json(const WinRateReport& r) {
  Json j = Json::Object{};
  j["schema"] = EVALS_WINRATE_SCHEMA;
  Json sources = Json::Array{};
  for (const auto& s : r.sources) sources.push_back(s);
  j["sources"] = sources;
  j["length_unit"] = r.length_unit;
  j["skipped"] = static_cast<uint64_t>(r.skipped);
  j["confidence"] = r.confidence;
  Json tasks = Json::Array{};
  for (const auto& t : r.tasks) {
    Json x = Json::Object{};
    x["task"] = t.task;
    x["n"] = static_cast<uint64_t>(t.result.n);
    x["win_rate"] = interval_json(t.result.win_rate);
    x["length_controlled_win_rate"] = interval_json(t.result.intercept);
    x["slope"] = interval_json(t.result.slope);
    x["mean_length_difference"] = number(t.result.mean_length_difference);
    tasks.push_back(x);
  }
  j["tasks"] = tasks;
  return j;
}

std::string winrate_markdown(const WinRateReport& r) {
  std::string md = "# rldk evals winrate\n\nWin rate of B over A (ties 1/2), raw and at equal length: least squares "
                   "of the preference on len(B) - len(A) (" +
                   std::string(r.length_unit == "words" ? "words counted in the outputs" : "the given lengths") +
                   "); the intercept is the expected preference when both answers are as long. Intervals: bootstrap "
                   "over items.\n\n";
  md += "| task | n | win rate | length-controlled | slope per unit | mean len(B) - len(A) |\n";
  md += "|---|---|---|---|---|---|\n";
  for (const auto& t : r.tasks) {
    md += "| " + md_text(t.task) + " | " + std::to_string(t.result.n) + " | " + interval_text(t.result.win_rate) +
          " | " + interval_text(t.result.intercept) + " | " + interval_text(t.result.slope) + " | " +
          fmt(t.result.mean_length_difference) + " |\n";
  }
  if (r.skipped > 0) md += "\n" + std::to_string(r.skipped) + " rows without a preference or lengths were skipped.\n";
  return md;
}

}  // namespace rldk::evals
