// suspicious_samples: the evidence. The highest-reward samples that are unusually long for their group or
// repeat themselves, quoted, so a person reads what the reward model paid for instead of trusting a score.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "reward/sample_table.h"

namespace rldk::reward {

SuspiciousCheck check_suspicious(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                 size_t column_index, const RewardHealthThresholds& t) {
  SuspiciousCheck c;
  bool any_text = std::any_of(column.sample.begin(), column.sample.end(), [&](size_t i) { return state.chars[i] > 0; });
  if (!any_text) {
    c.reason = column.value.empty() ? "the column has no finite values" : "the samples carry no completion text";
    return c;
  }
  // Length z-score within the (step, group), population std: a group's own spread is the yardstick.
  std::vector<double> length_z(column.value.size(), NO_VALUE);
  for (const auto& g : column.groups) {
    double mean = 0, squares = 0;
    for (size_t k : g) mean += state.words[column.sample[k]];
    mean /= static_cast<double>(g.size());
    for (size_t k : g) squares += (state.words[column.sample[k]] - mean) * (state.words[column.sample[k]] - mean);
    double sd = std::sqrt(squares / static_cast<double>(g.size()));
    if (sd <= 0) continue;
    for (size_t k : g) length_z[k] = (state.words[column.sample[k]] - mean) / sd;
  }
  std::vector<size_t> candidates;
  for (size_t k = 0; k < column.value.size(); ++k) {
    if (length_z[k] > t.suspicious_length_z || state.repetition[column.sample[k]] > t.suspicious_repetition) {
      candidates.push_back(k);
    }
  }
  c.candidates = candidates.size();
  // Highest reward first; among equal rewards the longer one, as the kept texts are ordered.
  std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
    if (column.value[a] != column.value[b]) return column.value[a] > column.value[b];
    return state.words[column.sample[a]] > state.words[column.sample[b]];
  });
  candidates.resize(std::min(candidates.size(), t.suspicious_count));
  std::unordered_map<size_t, const KeptExample*> kept;
  for (const auto& e : state.kept[column_index]) kept.emplace(e.sample, &e);
  for (size_t k : candidates) {
    size_t i = column.sample[k];
    SuspiciousSample s;
    s.source = state.sources[state.source[i]];
    s.row = state.row[i];
    s.step = state.step[i];
    s.reward = column.value[k];
    s.length_chars = state.chars[i];
    s.length_words = state.words[i];
    s.length_z = length_z[k];
    s.repetition = state.repetition[i];
    if (length_z[k] > t.suspicious_length_z) s.reasons.emplace_back("long for its group");
    if (s.repetition > t.suspicious_repetition) s.reasons.emplace_back("repetitive");
    if (auto it = kept.find(i); it != kept.end()) {
      s.text_kept = true;
      s.text = it->second->text;
      s.text_truncated = it->second->truncated;
      s.prompt = it->second->prompt;
      s.prompt_truncated = it->second->prompt_truncated;
    }
    c.samples.push_back(std::move(s));
  }
  if (c.samples.empty()) {
    c.status = RewardCheckStatus::ok;
    c.message = "No sample is long for its group (length z > " + format_number(t.suspicious_length_z) +
                ") or repetitive (repetition > " + format_number(t.suspicious_repetition) + ").";
  } else {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::info;
    c.message = std::to_string(c.candidates) + " sample(s) are long for their group or repetitive; the " +
                std::to_string(c.samples.size()) + " with the highest reward are quoted for a person to read.";
  }
  return c;
}

}  // namespace rldk::reward
