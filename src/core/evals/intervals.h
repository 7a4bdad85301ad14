// From bootstrap replicates to an interval: percentile, or BCa as scipy.stats.bootstrap computes it (bias
// correction from the share of replicates below the estimate with ties counting 1/2, acceleration from jackknife
// values). Shared by every bootstrap of src/core/evals.
#pragma once

#include <vector>

#include "rldk/evals.h"

namespace rldk::evals::detail {

// `replicates` is sorted in place. `jackknife` is needed only for BCa; an empty one (or a degenerate bias
// correction) falls back to percentile and says so in the note.
Interval interval_from_replicates(double estimate, std::vector<double>& replicates, double confidence,
                                  IntervalMethod method, const std::vector<double>& jackknife);

}  // namespace rldk::evals::detail
