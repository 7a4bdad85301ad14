// The median of a stream of magnitudes in bounded memory, for whole-run summaries that a streaming scan cannot
// keep the run for (the GRPO loss note). Exact while it has seen at most EXACT_LIMIT values; beyond that each value
// is counted in a bucket of relative width 2^-10 (its exponent and the top 10 bits of its mantissa, so buckets are
// ordered like the values and need no logarithm), and the median is read from the bucket midpoints: within
// RELATIVE_ERROR of a true middle value. Memory is one counter per bucket in use: 1,024 per factor of two the values
// span. Hand-written: the need is this one statistic, about fifty lines, and no C++ quantile-sketch library is
// packaged for Debian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace rldk::stats {

class MedianSketch {
 public:
  static constexpr size_t EXACT_LIMIT = 16384;
  static constexpr int MANTISSA_BITS = 10;
  static constexpr double RELATIVE_ERROR = 1.0 / (2 << MANTISSA_BITS);  // half a bucket's relative width

  // A value >= 0 (magnitudes); negative and non-finite values are ignored.
  void add(double value);
  uint64_t count() const { return count_; }
  // The median (mean of the two middle values for an even count, as stats::median_in_place); NaN when empty.
  double median() const;

 private:
  void count_in_bucket(double value);
  uint64_t count_ = 0;
  std::vector<double> exact_;  // while count_ <= EXACT_LIMIT
  bool sketched_ = false;
  std::unordered_map<uint64_t, uint64_t> buckets_;  // bucket key -> count
};

}  // namespace rldk::stats
