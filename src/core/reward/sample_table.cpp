// RewardHealthAccumulator's intake: per-sample numbers, kept example texts, and the shared views of them.
#include "reward/sample_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "reward/text_features.h"

namespace rldk {
namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// a ranks above b: higher reward, then longer. As the heap's comparison this puts the lowest-ranked example, the
// one to drop first, on top.
bool ranks_above(const KeptExample& a, const KeptExample& b) {
  return a.reward != b.reward ? a.reward > b.reward : a.words > b.words;
}

}  // namespace

RewardHealthAccumulator::RewardHealthAccumulator(size_t quote_chars, size_t kept_examples,
                                                 const std::vector<ShortcutPhraseFeature>& phrase_features)
    : state_(std::make_unique<State>()) {
  state_->quote_chars = quote_chars;
  state_->kept_limit = kept_examples;
  state_->matcher = reward::PhraseMatcher(phrase_features);
  state_->feature_names.assign(reward::BUILTIN_FEATURES.begin(), reward::BUILTIN_FEATURES.end());
  for (const auto& name : state_->matcher.names()) state_->feature_names.push_back(name);
}

RewardHealthAccumulator::~RewardHealthAccumulator() = default;

size_t RewardHealthAccumulator::rows() const { return state_->step.size(); }

void RewardHealthAccumulator::on_schema(const SampleSchema& schema) {
  State& s = *state_;
  if (s.format.empty()) s.format = schema.format;
  s.has_gold = s.has_gold || schema.has_gold;
  s.has_group = s.has_group || schema.has_group;
  s.has_step = s.has_step || schema.has_step;
  // Columns are matched by name, so a file that lists them in another order (or adds one) still lines up; a new
  // column reads NaN for the samples before it.
  s.schema_column.clear();
  for (const auto& name : schema.rewards) {
    auto it = std::find(s.reward_names.begin(), s.reward_names.end(), name);
    if (it == s.reward_names.end()) {
      s.reward_names.push_back(name);
      s.rewards.emplace_back(s.step.size(), NaN);
      s.kept.emplace_back();
      it = s.reward_names.end() - 1;
    }
    s.schema_column.push_back(static_cast<size_t>(it - s.reward_names.begin()));
  }
}

void RewardHealthAccumulator::on_row(const SampleRow& row) {
  State& s = *state_;
  size_t sample = s.step.size();
  std::hash<std::string_view> hash;
  reward::TextFeatures f = reward::text_features(row.completion, s.hash_scratch);
  s.step.push_back(row.step);
  uint64_t group = hash(row.group);
  s.group_hash.push_back(group);
  // Pass rates are pooled per prompt; a file without prompt text falls back to its group key (and a group that is
  // the prompt, as in GRPO without a group column, is not hashed twice).
  bool same = row.prompt.empty() || (row.group.data() == row.prompt.data() && row.group.size() == row.prompt.size());
  s.prompt_hash.push_back(same ? group : hash(row.prompt));
  s.chars.push_back(f.chars);
  s.words.push_back(f.words);
  s.repetition.push_back(static_cast<float>(f.repetition));
  s.gold.push_back(std::isfinite(row.gold) ? row.gold : NaN);
  if (s.sources.empty() || s.sources.back() != row.source) s.sources.emplace_back(row.source);
  s.source.push_back(static_cast<uint32_t>(s.sources.size() - 1));
  s.row.push_back(row.row);
  size_t width = s.feature_names.size();
  s.features.resize(s.features.size() + width);
  reward::shortcut_features(row.completion, f, s.matcher, s.features.data() + sample * width);
  for (auto& column : s.rewards) column.push_back(NaN);
  for (size_t i = 0; i < s.schema_column.size() && row.rewards != nullptr; ++i) {
    double v = row.rewards[i];
    if (!std::isfinite(v)) continue;
    size_t c = s.schema_column[i];
    s.rewards[c][sample] = v;
    auto& heap = s.kept[c];
    if (s.kept_limit == 0) continue;
    KeptExample candidate{v, f.words, sample, {}, false, {}, false};
    bool full = heap.size() >= s.kept_limit;
    if (full && !ranks_above(candidate, heap.front())) continue;  // not above the lowest kept
    candidate.text = reward::truncate_chars(row.completion, s.quote_chars, candidate.truncated);
    candidate.prompt = reward::truncate_chars(row.prompt, s.quote_chars, candidate.prompt_truncated);
    if (full) {
      std::pop_heap(heap.begin(), heap.end(), ranks_above);
      heap.back() = std::move(candidate);
    } else {
      heap.push_back(std::move(candidate));
    }
    std::push_heap(heap.begin(), heap.end(), ranks_above);
  }
}

void RewardHealthAccumulator::on_pair_format(const std::string& format) {
  if (state_->pair_format.empty()) state_->pair_format = format;
}

void RewardHealthAccumulator::on_pair(const PairRow& pair) {
  State& s = *state_;
  double margin = pair.first_score - pair.second_score;  // NaN when either is missing
  s.pair_margin.push_back(std::isfinite(margin) ? margin : NaN);
  s.pair_label.push_back(static_cast<float>(pair.label));
  if (!std::isfinite(margin) || pair.label == 0.5 || margin == 0 || (margin > 0) == (pair.label == 1)) return;
  // Wrong: keep it if it is among the most confident wrong pairs (a heap with the least confident on top).
  auto less_confident = [](const MiscalibratedPair& a, const MiscalibratedPair& b) { return a.confidence > b.confidence; };
  double confidence = 1 / (1 + std::exp(-std::abs(margin)));
  auto& heap = s.wrong;
  bool full = heap.size() >= s.kept_limit;
  if (s.kept_limit == 0 || (full && confidence <= heap.front().confidence)) return;
  MiscalibratedPair w;
  w.source = std::string(pair.source);
  w.row = pair.row;
  w.first_score = pair.first_score;
  w.second_score = pair.second_score;
  w.label = pair.label;
  w.confidence = confidence;
  bool cut = false, any_cut = false;
  w.prompt = reward::truncate_chars(pair.prompt, s.quote_chars, cut);
  any_cut = cut;
  w.preferred = reward::truncate_chars(pair.label == 1 ? pair.first : pair.second, s.quote_chars, cut);
  any_cut = any_cut || cut;
  w.other = reward::truncate_chars(pair.label == 1 ? pair.second : pair.first, s.quote_chars, cut);
  w.text_truncated = any_cut || cut;
  if (full) {
    std::pop_heap(heap.begin(), heap.end(), less_confident);
    heap.back() = std::move(w);
  } else {
    heap.push_back(std::move(w));
  }
  std::push_heap(heap.begin(), heap.end(), less_confident);
}

namespace reward {

ColumnData column_data(const RewardHealthAccumulator::State& state, size_t column) {
  ColumnData d;
  const auto& values = state.rewards[column];
  d.sample.reserve(values.size());
  d.value.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    d.sample.push_back(i);
    d.value.push_back(values[i]);
  }
  // Groups in order of first appearance through one hash map: O(n), where sorting a million indices by an
  // indirect key cost more than every check that uses the groups.
  struct KeyHash {
    size_t operator()(const std::pair<int64_t, uint64_t>& k) const {
      return static_cast<size_t>(k.second ^ (static_cast<uint64_t>(k.first) * 0x9E3779B97F4A7C15ULL));
    }
  };
  std::unordered_map<std::pair<int64_t, uint64_t>, uint32_t, KeyHash> index;
  std::vector<std::vector<size_t>> all;
  uint32_t current = 0;
  for (size_t pos = 0; pos < d.sample.size(); ++pos) {
    size_t i = d.sample[pos];
    // Trainers write a group's samples next to each other: the map is consulted only when the group changes.
    if (pos == 0 || state.step[i] != state.step[d.sample[pos - 1]] ||
        state.group_hash[i] != state.group_hash[d.sample[pos - 1]]) {
      auto [it, added] = index.try_emplace({state.step[i], state.group_hash[i]}, static_cast<uint32_t>(all.size()));
      if (added) all.emplace_back();
      current = it->second;
    }
    all[current].push_back(pos);
  }
  for (auto& g : all) {
    if (g.size() >= 2) d.groups.push_back(std::move(g));
  }
  return d;
}

StepWindows step_windows(std::span<const int64_t> steps) {
  StepWindows w;
  w.steps.assign(steps.begin(), steps.end());
  std::sort(w.steps.begin(), w.steps.end());
  w.steps.erase(std::unique(w.steps.begin(), w.steps.end()), w.steps.end());
  return w;
}

namespace {
size_t window_size(size_t steps, double share) {
  auto k = static_cast<size_t>(std::llround(share * static_cast<double>(steps)));
  return std::clamp<size_t>(k, 1, std::max<size_t>(steps, 1));
}
}  // namespace

int64_t StepWindows::early_last(double share) const {
  return steps.empty() ? 0 : steps[window_size(steps.size(), share) - 1];
}

int64_t StepWindows::late_first(double share) const {
  return steps.empty() ? 0 : steps[steps.size() - window_size(steps.size(), share)];
}

const KeptExample* kept_example(const RewardHealthAccumulator::State& state, size_t column_index, size_t sample) {
  for (const auto& e : state.kept[column_index]) {
    if (e.sample == sample) return &e;
  }
  return nullptr;
}

CorrelationEstimate estimate_of(const stats::Correlation& c) {
  CorrelationEstimate e;
  e.r = c.r;
  e.n = c.n;
  e.p_value = c.p_value;
  e.ci_low = c.ci_low;
  e.ci_high = c.ci_high;
  return e;
}

std::string format_number(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace reward
}  // namespace rldk
