#include "stats/median_sketch.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "stats/robust.h"

namespace rldk::stats {
namespace {

constexpr int KEY_SHIFT = 52 - MedianSketch::MANTISSA_BITS;

// A non-negative double's bits grow with its value, so the top bits are an ordered bucket key.
uint64_t bucket_key(double value) { return std::bit_cast<uint64_t>(value) >> KEY_SHIFT; }

// The midpoint of a bucket's range (0 for the bucket holding 0 and the smallest subnormals).
double midpoint(uint64_t key) {
  if (key == 0) return 0;
  double low = std::bit_cast<double>(key << KEY_SHIFT);
  double high = std::bit_cast<double>((key + 1) << KEY_SHIFT);
  return low + (high - low) / 2;
}

}  // namespace

void MedianSketch::add(double value) {
  if (!(value >= 0) || !std::isfinite(value)) return;
  ++count_;
  if (sketched_) {
    count_in_bucket(value);
    return;
  }
  exact_.push_back(value);
  if (exact_.size() <= EXACT_LIMIT) return;
  sketched_ = true;
  for (double v : exact_) count_in_bucket(v);
  exact_.clear();
  exact_.shrink_to_fit();
}

void MedianSketch::count_in_bucket(double value) { ++buckets_[bucket_key(value + 0.0)]; }  // + 0.0: -0 is 0

double MedianSketch::median() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  if (!sketched_) {
    std::vector<double> copy = exact_;
    return median_in_place(copy);
  }
  // The values of rank (n-1)/2 and n/2 (0-based), read from the buckets in ascending order.
  std::vector<std::pair<uint64_t, uint64_t>> ordered(buckets_.begin(), buckets_.end());
  std::sort(ordered.begin(), ordered.end());
  uint64_t low_rank = (count_ - 1) / 2, high_rank = count_ / 2, seen = 0;
  double low = NAN, high = NAN;
  for (const auto& [key, n] : ordered) {
    seen += n;
    if (std::isnan(low) && low_rank < seen) low = midpoint(key);
    if (high_rank < seen) {
      high = midpoint(key);
      break;
    }
  }
  return (low + high) / 2;
}

}  // namespace rldk::stats
