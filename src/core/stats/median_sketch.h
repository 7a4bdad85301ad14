// The median of a stream of magnitudes in bounded memory, for whole-run summaries that a streaming scan cannot
// keep the run for (the GRPO loss note). Exact while it has seen at most EXACT_LIMIT values; beyond that the values
// go into logarithmic buckets of relative width 2 x RELATIVE_ERROR (the DDSketch construction), and the median is
// that of the bucket representatives: within RELATIVE_ERROR of a true middle value. Hand-written: the need is this
// one statistic, about fifty lines, and no C++ quantile-sketch library is packaged for Debian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace rldk::stats {

class MedianSketch {
 public:
  static constexpr size_t EXACT_LIMIT = 16384;
  static constexpr double RELATIVE_ERROR = 0.001;

  // A value >= 0 (magnitudes); negative and non-finite values are ignored.
  void add(double value);
  uint64_t count() const { return count_; }
  // The median (mean of the two middle values for an even count, as stats::median_in_place); NaN when empty.
  double median() const;

 private:
  void spill();
  int bucket(double value) const;
  double representative(int bucket) const;
  uint64_t count_ = 0;
  std::vector<double> exact_;          // while count_ <= EXACT_LIMIT
  bool sketched_ = false;
  uint64_t zeros_ = 0;                 // values too small for a bucket (below 1e-300)
  std::map<int, uint64_t> buckets_;    // log-bucket index -> count
};

}  // namespace rldk::stats
