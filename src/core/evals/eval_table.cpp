// Eval results into EvalData: a results table (arm, seed, task, score, as rliable takes) or per-item eval outputs
// (item id, task, score or correct), read by the sample-table readers (JSONL, Parquet, a folder of them) through a
// CellSink that gives the columns their eval roles.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "rldk/evals.h"
#include "samples/cell_sink.h"

namespace rldk::evals {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

enum class Role { none, arm, seed, task, item, score };

// Names by role, as rliable users, lm-eval-harness, OpenAI evals and hand-written tables spell them (lower-cased).
Role role_by_name(const std::string& name, const EvalColumns& mapped) {
  auto is = [&](const std::string& m, std::initializer_list<std::string_view> names) {
    if (!m.empty()) return name == m;
    return std::find(names.begin(), names.end(), lower(name)) != names.end();
  };
  if (is(mapped.score, {"score", "correct", "is_correct", "accuracy", "acc", "pass", "passed", "normalized_score",
                        "value", "return", "reward", "exact_match", "em"})) {
    return Role::score;
  }
  if (is(mapped.arm, {"algorithm", "arm", "checkpoint", "model", "agent", "method", "run", "run_name"})) {
    return Role::arm;
  }
  if (is(mapped.seed, {"seed", "run_id", "replicate", "trial"})) return Role::seed;
  if (is(mapped.task, {"task", "env", "environment", "benchmark", "dataset", "game", "eval", "suite"})) {
    return Role::task;
  }
  if (is(mapped.item, {"item", "item_id", "id", "example_id", "question_id", "problem_id", "sample_id", "prompt_id",
                       "doc_id", "idx", "index"})) {
    return Role::item;
  }
  return Role::none;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class EvalAssembler final : public samples::CellSink {
 public:
  EvalAssembler(const EvalReadOptions& options, EvalData& data, Diagnostics& diagnostics)
      : options_(options), data_(data), diagnostics_(diagnostics) {}

  Status begin_file(const std::string& path, const std::vector<samples::FileColumn>& columns,
                    std::optional<int64_t>, const std::string&) override {
    path_ = path;
    roles_.clear();
    names_.clear();
    bool score = false;
    for (const auto& c : columns) {
      names_.push_back(c.name);
      Role r = role_by_name(c.name, options_.columns);
      if (r != Role::none && std::find(roles_.begin(), roles_.end(), r) != roles_.end()) r = Role::none;
      roles_.push_back(r);
      score |= r == Role::score;
    }
    if (!score) {
      return Error{ErrorCode::unrecognized,
                   "no score column (looked for score, correct, accuracy, pass, value, return, reward; name one "
                   "with --score-col)",
                   path};
    }
    default_arm_ = options_.arm.empty() ? std::filesystem::path(path).stem().string() : options_.arm;
    if (default_arm_.ends_with(".jsonl")) default_arm_.resize(default_arm_.size() - 6);
    clear();
    return Ok{};
  }
  int column_index(std::string_view name) const override { return samples::position_of(names_, name); }
  int add_column(const samples::FileColumn& column) override {
    Role r = role_by_name(column.name, options_.columns);
    if (r != Role::none && std::find(roles_.begin(), roles_.end(), r) != roles_.end()) r = Role::none;
    roles_.push_back(r);
    names_.push_back(column.name);
    return static_cast<int>(roles_.size() - 1);
  }
  void set_text(int column, std::string_view text) override {
    switch (role(column)) {
      case Role::arm: arm_.assign(text); break;
      case Role::seed: seed_.assign(text); break;
      case Role::task: task_.assign(text); break;
      case Role::item: item_.assign(text); break;
      case Role::score: {
        std::string t = lower(text);
        if (t == "true" || t == "yes" || t == "pass") score_ = 1;
        else if (t == "false" || t == "no" || t == "fail") score_ = 0;
        else {
          char* end = nullptr;
          std::string s(text);
          double v = std::strtod(s.c_str(), &end);
          if (end != s.c_str() && *end == '\0') score_ = v;
        }
        break;
      }
      case Role::none: break;
    }
  }
  void set_number(int column, double value) override {
    switch (role(column)) {
      case Role::score: score_ = value; break;
      case Role::none: break;
      default: set_text(column, number_text(value)); break;
    }
  }
  void end_row(uint64_t row) override {
    ++rows_;
    if (std::isfinite(score_)) {
      EvalCell cell;
      cell.arm = data_.arm_index(arm_.empty() ? default_arm_ : arm_);
      cell.task = data_.task_index(task_.empty() ? "score" : task_);
      cell.seed = std::move(seed_);
      cell.item = std::move(item_);
      cell.score = score_;
      data_.cells.push_back(std::move(cell));
    } else {
      diagnostics_.add(Diagnostic{"eval_score", path_, row + 1, "row has no finite score; skipped"});
    }
    clear();
  }
  uint64_t rows() const override { return rows_; }

 private:
  Role role(int column) const {
    return column >= 0 && static_cast<size_t>(column) < roles_.size() ? roles_[column] : Role::none;
  }
  void clear() {
    arm_.clear();
    seed_.clear();
    task_.clear();
    item_.clear();
    score_ = NA;
  }

  const EvalReadOptions& options_;
  EvalData& data_;
  Diagnostics& diagnostics_;
  std::string path_, default_arm_;
  std::vector<Role> roles_;
  std::vector<std::string> names_;
  std::string arm_, seed_, task_, item_;
  double score_ = NA;
  uint64_t rows_ = 0;
};

}  // namespace

uint32_t EvalData::arm_index(const std::string& name) {
  auto it = std::find(arms.begin(), arms.end(), name);
  if (it != arms.end()) return static_cast<uint32_t>(it - arms.begin());
  arms.push_back(name);
  return static_cast<uint32_t>(arms.size() - 1);
}

uint32_t EvalData::task_index(const std::string& name) {
  auto it = std::find(tasks.begin(), tasks.end(), name);
  if (it != tasks.end()) return static_cast<uint32_t>(it - tasks.begin());
  tasks.push_back(name);
  return static_cast<uint32_t>(tasks.size() - 1);
}

Status read_eval_results(const std::string& path, const EvalReadOptions& options, EvalData& data,
                         Diagnostics& diagnostics) {
  EvalAssembler assembler(options, data, diagnostics);
  Status status = samples::read_table(path, assembler, diagnostics);
  if (!status.ok()) return status;
  data.sources.push_back(path);
  return Ok{};
}

}  // namespace rldk::evals
