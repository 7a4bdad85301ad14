// Pieces every reward report shares (health JSON and Markdown, the reward card, the drift report): one way to
// write an absent number and a correlation with its interval.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rldk/json.h"
#include "rldk/reward_health.h"

namespace rldk::reward {

// Absent measurements are null, not 0 (and not the "NaN" string Json would print).
Json json_number(double v);
Json correlation_json(const CorrelationEstimate& c);
// "= 1.2e-12", or "< 1e-300" for a p-value that underflowed to 0.
std::string p_text(double p);
// "0.61 [0.59, 0.63], p = 1e-12, n = 3840", or "n/a".
std::string correlation_text(const CorrelationEstimate& c);
// Every check of a column with its JSON name, in report order: the one list the flat findings and the card walk.
std::vector<std::pair<const char*, const RewardCheck*>> checks_of(const RewardColumnHealth& c);

}  // namespace rldk::reward
