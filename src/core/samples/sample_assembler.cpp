#include "samples/sample_assembler.h"

#include <algorithm>
#include <cctype>

namespace rldk::samples {
namespace {

constexpr auto named = column_named;

// Numbers in sample files that describe a sample but do not score it.
bool bookkeeping(std::string_view name) {
  if (name.substr(0, 2) == "__") return true;  // pandas' saved index (__index_level_0__) and other private columns
  return named(name, {"index", "idx", "id", "sample_id", "sample_idx", "row", "epoch", "seed", "length",
                      "response_length", "completion_length", "prompt_length", "num_tokens", "tokens",
                      "completion_tokens", "prompt_tokens", "time", "timestamp", "duration"});
}

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

SampleAssembler::Role SampleAssembler::role_of(const FileColumn& c) const {
  const SampleColumns& m = mapping_;
  auto is = [&](const std::string& mapped, std::initializer_list<std::string_view> names) {
    return mapped.empty() ? named(c.name, names) : c.name == mapped;
  };
  if (is(m.step, {"step", "global_step", "iteration", "training_step", "train_step"})) return Role::step;
  if (is(m.completion, {"completion", "output", "response", "answer", "generation", "generated_text"})) {
    return Role::completion;
  }
  if (is(m.prompt, {"prompt", "input", "query", "question", "instruction"})) return Role::prompt;
  if (is(m.group, {"group", "group_id", "uid", "prompt_id", "prompt_uid"})) return Role::group;
  if (is(m.advantage, {"advantage", "advantages"})) return Role::advantage;
  if (is(m.gold, {"gold", "gold_score", "gold_reward", "judge", "judge_score"})) return Role::gold;
  if (!m.rewards.empty()) {
    return std::find(m.rewards.begin(), m.rewards.end(), c.name) != m.rewards.end() ? Role::reward : Role::none;
  }
  // Every other number is a reward: TRL names its reward columns after the reward functions.
  return c.numeric && !bookkeeping(c.name) ? Role::reward : Role::none;
}

Status SampleAssembler::begin_file(const std::string& path, const std::vector<FileColumn>& columns,
                                   std::optional<int64_t> file_step, const std::string& format) {
  path_ = path;
  file_step_ = file_step;
  roles_.clear();
  reward_slot_.clear();
  index_.clear();
  SampleSchema schema;
  schema.format = format;
  bool completion = false;
  std::vector<std::string> rewards;
  for (size_t i = 0; i < columns.size(); ++i) {
    Role role = role_of(columns[i]);
    // A second column for a single role (e.g. both "output" and "response") keeps the first.
    if (role != Role::reward && role != Role::none &&
        std::find(roles_.begin(), roles_.end(), role) != roles_.end()) {
      role = Role::none;
    }
    roles_.push_back(role);
    index_.emplace(columns[i].name, static_cast<int>(i));
    completion |= role == Role::completion;
    schema.has_step |= role == Role::step;
    schema.has_group |= role == Role::group;
    schema.has_advantage |= role == Role::advantage;
    schema.has_gold |= role == Role::gold;
    if (role == Role::reward) rewards.push_back(columns[i].name);
  }
  if (!completion && completion_required_) {
    return Error{ErrorCode::unrecognized,
                 "no completion column (looked for completion, output, response, answer; name one with "
                 "--response-col)",
                 path};
  }
  if (!schema_fixed_) {
    if (rewards.empty()) {
      return Error{ErrorCode::unrecognized,
                   "no reward column (every numeric column that is not the step, advantage or gold is taken as "
                   "a reward; name one with --reward-col)",
                   path};
    }
    reward_names_ = rewards;
    schema_fixed_ = true;
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    int slot = -1;
    if (roles_[i] == Role::reward) {
      auto it = std::find(reward_names_.begin(), reward_names_.end(), columns[i].name);
      if (it != reward_names_.end()) {
        slot = static_cast<int>(it - reward_names_.begin());
      } else {
        diagnostics_.add(Diagnostic{"sample_column", path, 0,
                                    "reward column '" + columns[i].name + "' is not in the first file; ignored"});
      }
    }
    reward_slot_.push_back(slot);
  }
  for (const auto& name : reward_names_) {
    if (std::none_of(columns.begin(), columns.end(), [&](const FileColumn& c) { return c.name == name; })) {
      diagnostics_.add(Diagnostic{"sample_column", path, 0, "reward column '" + name + "' is missing here"});
    }
  }
  schema.rewards = reward_names_;
  schema_ = schema;
  sink_.on_schema(schema_);
  rewards_.assign(reward_names_.size(), NaN);
  return Ok{};
}

int SampleAssembler::add_column(const FileColumn& column) {
  Role role = role_of(column);
  if (role != Role::reward && role != Role::none && std::find(roles_.begin(), roles_.end(), role) != roles_.end()) {
    role = Role::none;
  }
  int slot = -1;
  if (role == Role::reward) {
    auto it = std::find(reward_names_.begin(), reward_names_.end(), column.name);
    if (it != reward_names_.end()) {
      slot = static_cast<int>(it - reward_names_.begin());
    } else {
      diagnostics_.add(Diagnostic{"sample_column", path_, 0,
                                  "reward column '" + column.name + "' appears after the first record; ignored"});
    }
  }
  roles_.push_back(role);
  reward_slot_.push_back(slot);
  index_.emplace(column.name, static_cast<int>(roles_.size() - 1));
  return static_cast<int>(roles_.size() - 1);
}

int SampleAssembler::column_index(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? -1 : it->second;
}

void SampleAssembler::set_text(int column, std::string_view text) {
  if (column < 0 || static_cast<size_t>(column) >= roles_.size()) return;
  switch (roles_[column]) {
    case Role::prompt: prompt_.assign(text); break;
    case Role::completion: completion_.assign(text); break;
    case Role::group: group_.assign(text); break;
    default: break;
  }
}

void SampleAssembler::set_number(int column, double value) {
  if (column < 0 || static_cast<size_t>(column) >= roles_.size()) return;
  switch (roles_[column]) {
    case Role::step:
      step_ = value;
      has_step_ = true;
      break;
    case Role::reward:
      if (reward_slot_[column] >= 0) rewards_[reward_slot_[column]] = value;
      break;
    case Role::advantage: advantage_ = value; break;
    case Role::gold: gold_ = value; break;
    case Role::group: group_ = std::to_string(value); break;  // a numeric group id
    default: break;
  }
}

void SampleAssembler::end_row(uint64_t row) {
  SampleRow out;
  bool keep = true;
  if (has_step_ && std::isfinite(step_) && std::floor(step_) == step_ && std::fabs(step_) < 9.0e15) {
    out.step = static_cast<int64_t>(step_);
  } else if (!has_step_) {
    out.step = file_step_.value_or(0);
  } else {
    if (bad_steps_++ < 5) {
      diagnostics_.add(Diagnostic{"bad_step", path_, row + 1, "step is not an integer; row skipped"});
    }
    keep = false;
  }
  if (keep) {
    out.prompt = prompt_;
    out.completion = completion_;
    out.group = group_.empty() ? std::string_view(prompt_) : std::string_view(group_);
    out.rewards = rewards_.data();
    out.advantage = advantage_;
    out.gold = gold_;
    out.source = path_;
    out.row = row;
    sink_.on_row(out);
    ++rows_;
  }
  prompt_.clear();
  completion_.clear();
  group_.clear();
  has_step_ = false;
  std::fill(rewards_.begin(), rewards_.end(), NaN);
  advantage_ = NaN;
  gold_ = NaN;
}

}  // namespace rldk::samples
