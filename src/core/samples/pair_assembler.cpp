#include "samples/pair_assembler.h"

#include <cmath>

namespace rldk::samples {
namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

bool mentions_chosen(std::string_view name) {
  std::string lower(name);
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower.find("chosen") != std::string::npos;
}

// A label cell: which completion was preferred. Numbers are the probability that the first is preferred
// (1, 0, or 0.5 for a tie); words name the side. NaN: not a label.
double label_from_text(std::string_view text) {
  if (column_named(text, {"a", "model_a", "response_a", "first", "chosen", "1", "1.0", "true"})) return 1;
  if (column_named(text, {"b", "model_b", "response_b", "second", "rejected", "0", "0.0", "false"})) return 0;
  if (column_named(text, {"tie", "draw", "equal", "tie (bothbad)", "both", "0.5"})) return 0.5;
  return NaN;
}

}  // namespace

PairAssembler::Role PairAssembler::role_of(const FileColumn& c, const SampleColumns& m) {
  auto is = [&](const std::string& mapped, std::initializer_list<std::string_view> names) {
    return mapped.empty() ? column_named(c.name, names) : c.name == mapped;
  };
  if (is(m.first, {"chosen", "response_a", "completion_a", "output_a", "answer_a", "chosen_response",
                   "response_chosen"})) {
    return Role::first;
  }
  if (is(m.second, {"rejected", "response_b", "completion_b", "output_b", "answer_b", "rejected_response",
                    "response_rejected"})) {
    return Role::second;
  }
  if (is(m.first_score, {"chosen_score", "score_chosen", "scores_chosen", "chosen_reward", "reward_chosen",
                         "rewards_chosen", "chosen_rewards", "score_a", "reward_a", "scores_a", "a_score"})) {
    return Role::first_score;
  }
  if (is(m.second_score, {"rejected_score", "score_rejected", "scores_rejected", "rejected_reward", "reward_rejected",
                          "rewards_rejected", "rejected_rewards", "score_b", "reward_b", "scores_b", "b_score"})) {
    return Role::second_score;
  }
  if (is(m.label, {"label", "preference", "winner", "human_preference", "choice", "preferred"})) return Role::label;
  if (is(m.prompt, {"prompt", "input", "query", "question", "instruction", "context"})) return Role::prompt;
  return Role::none;
}

bool PairAssembler::is_pair_table(const std::vector<FileColumn>& columns, const SampleColumns& mapping) {
  bool first = false, second = false, first_score = false, second_score = false;
  for (const auto& c : columns) {
    switch (role_of(c, mapping)) {
      case Role::first: first = true; break;
      case Role::second: second = true; break;
      case Role::first_score: first_score = true; break;
      case Role::second_score: second_score = true; break;
      default: break;
    }
  }
  return (first && second) || (first_score && second_score);
}

Status PairAssembler::begin_file(const std::string& path, const std::vector<FileColumn>& columns,
                                 std::optional<int64_t>, const std::string& format) {
  path_ = path;
  roles_.clear();
  names_.clear();
  chosen_named_ = false;
  bool label = false;
  for (const auto& c : columns) {
    Role role = role_of(c, mapping_);
    roles_.push_back(role);
    names_.push_back(c.name);
    if ((role == Role::first || role == Role::first_score) && mentions_chosen(c.name)) chosen_named_ = true;
    label = label || role == Role::label;
  }
  if (!label && !chosen_named_) {
    return Error{ErrorCode::unrecognized,
                 "preference pairs named A/B need a label column saying which one was preferred (label, "
                 "preference, winner; or --label-col)",
                 path};
  }
  sink_.on_pair_format(format + " (preference pairs)");
  return Ok{};
}

int PairAssembler::column_index(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int PairAssembler::add_column(const FileColumn& column) {
  roles_.push_back(role_of(column, mapping_));
  names_.push_back(column.name);
  return static_cast<int>(roles_.size() - 1);
}

void PairAssembler::set_text(int column, std::string_view text) {
  switch (roles_[column]) {
    case Role::prompt: prompt_.assign(text); break;
    case Role::first: first_.assign(text); break;
    case Role::second: second_.assign(text); break;
    case Role::label:
      label_ = label_from_text(text);
      bad_label_ = std::isnan(label_);
      break;
    default: break;
  }
}

void PairAssembler::set_number(int column, double value) {
  switch (roles_[column]) {
    case Role::first_score: first_score_ = value; break;
    case Role::second_score: second_score_ = value; break;
    case Role::label:
      label_ = value == 0 || value == 0.5 || value == 1 ? value : NaN;
      bad_label_ = std::isnan(label_);
      break;
    default: break;
  }
}

void PairAssembler::end_row(uint64_t row) {
  if (std::isnan(label_) && !bad_label_ && chosen_named_) label_ = 1;  // chosen/rejected: chosen was preferred
  if (std::isnan(label_)) {
    if (bad_labels_++ < 5) {
      diagnostics_.add(Diagnostic{"bad_label", path_, row + 1,
                                  "the label is missing or not one of 0, 0.5, 1, a, b, tie; pair skipped"});
    }
  } else {
    PairRow pair;
    pair.prompt = prompt_;
    pair.first = first_;
    pair.second = second_;
    pair.first_score = first_score_;
    pair.second_score = second_score_;
    pair.label = label_;
    pair.source = path_;
    pair.row = row;
    sink_.on_pair(pair);
    ++rows_;
  }
  prompt_.clear();
  first_.clear();
  second_.clear();
  first_score_ = second_score_ = label_ = NaN;
  bad_label_ = false;
}

}  // namespace rldk::samples
