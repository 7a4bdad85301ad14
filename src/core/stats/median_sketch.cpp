#include "stats/median_sketch.h"

#include <cmath>
#include <limits>

#include "stats/robust.h"

namespace rldk::stats {
namespace {

// gamma = (1 + a) / (1 - a): a value v lies in bucket k = ceil(log_gamma v), represented by 2 gamma^k / (gamma + 1),
// which is within a of every value of the bucket.
const double LOG_GAMMA = std::log((1 + MedianSketch::RELATIVE_ERROR) / (1 - MedianSketch::RELATIVE_ERROR));
constexpr double SMALLEST = 1e-300;

}  // namespace

void MedianSketch::add(double value) {
  if (!(value >= 0) || !std::isfinite(value)) return;
  ++count_;
  if (!sketched_) {
    exact_.push_back(value);
    if (exact_.size() > EXACT_LIMIT) spill();
    return;
  }
  if (value < SMALLEST) {
    ++zeros_;
  } else {
    ++buckets_[bucket(value)];
  }
}

void MedianSketch::spill() {
  sketched_ = true;
  for (double v : exact_) {
    if (v < SMALLEST) {
      ++zeros_;
    } else {
      ++buckets_[bucket(v)];
    }
  }
  exact_.clear();
  exact_.shrink_to_fit();
}

int MedianSketch::bucket(double value) const { return static_cast<int>(std::ceil(std::log(value) / LOG_GAMMA)); }

double MedianSketch::representative(int k) const {
  double gamma = std::exp(LOG_GAMMA);
  return 2 * std::exp(k * LOG_GAMMA) / (gamma + 1);
}

double MedianSketch::median() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  if (!sketched_) {
    std::vector<double> copy = exact_;
    return median_in_place(copy);
  }
  // The values of rank (n-1)/2 and n/2 (0-based), read from the buckets in ascending order.
  uint64_t low_rank = (count_ - 1) / 2, high_rank = count_ / 2;
  double low = NAN, high = NAN;
  uint64_t seen = zeros_;
  if (low_rank < seen) low = 0;
  if (high_rank < seen) high = 0;
  for (const auto& [k, n] : buckets_) {
    if (!std::isnan(high)) break;
    seen += n;
    if (std::isnan(low) && low_rank < seen) low = representative(k);
    if (high_rank < seen) high = representative(k);
  }
  return (low + high) / 2;
}

}  // namespace rldk::stats
