#include "stats/step_envelope.h"

#include <algorithm>
#include <cmath>

namespace rldk::stats {
namespace {

bool earlier(int64_t step, uint64_t order, int64_t other_step, uint64_t other_order) {
  return step != other_step ? step < other_step : order < other_order;
}

}  // namespace

// Floor division, so that steps below the first one (a restart to an earlier checkpoint) get their own buckets.
int64_t StepEnvelope::key(int64_t step) const {
  int64_t offset = step - origin_;
  return offset >= 0 ? offset / width_ : -((-offset + width_ - 1) / width_);
}

void StepEnvelope::add(Bucket& b, const Kept& p) {
  if (!std::isfinite(p.value)) {
    if (!b.any_gap) b.gap = p;
    b.any_gap = true;
    return;
  }
  if (!b.any_finite) {
    b.first = b.last = b.low = b.high = p;
    b.any_finite = true;
    return;
  }
  if (earlier(p.step, p.order, b.first.step, b.first.order)) b.first = p;
  if (!earlier(p.step, p.order, b.last.step, b.last.order)) b.last = p;
  if (p.value < b.low.value) b.low = p;
  if (p.value > b.high.value) b.high = p;
}

void StepEnvelope::merge(Bucket& into, const Bucket& from) {
  if (from.any_gap && !into.any_gap) {
    into.gap = from.gap;
    into.any_gap = true;
  }
  if (!from.any_finite) return;
  for (const Kept& p : {from.first, from.last, from.low, from.high}) add(into, p);
}

void StepEnvelope::push(int64_t step, double value) {
  if (!started_) {
    started_ = true;
    origin_ = step;
  }
  Kept p{step, value, arrivals_++};
  for (;;) {
    int64_t k = key(step);
    if (last_ != buckets_.end() && k == last_key_) {
      add(last_->second, p);
      return;
    }
    auto it = buckets_.lower_bound(k);
    if (it == buckets_.end() || it->first != k) {
      if (buckets_.size() >= capacity_) {
        grow();
        continue;
      }
      it = buckets_.emplace_hint(it, k, Bucket{});
    }
    last_ = it;
    last_key_ = k;
    add(it->second, p);
    return;
  }
}

// Full: twice the width, neighbours merged (keys halve, rounding down, as key() does for the new width).
void StepEnvelope::grow() {
  width_ *= 2;
  std::map<int64_t, Bucket> wider;
  for (const auto& [old_key, bucket] : buckets_) {
    int64_t merged = old_key >= 0 ? old_key / 2 : -((-old_key + 1) / 2);
    auto [slot, fresh] = wider.try_emplace(merged, bucket);
    if (!fresh) merge(slot->second, bucket);
  }
  buckets_ = std::move(wider);
  last_ = buckets_.end();
}

void StepEnvelope::points(std::vector<int64_t>& steps, std::vector<double>& values) const {
  steps.clear();
  values.clear();
  std::vector<Kept> kept;
  for (const auto& [k, b] : buckets_) {
    size_t from = kept.size();
    if (b.any_finite) kept.insert(kept.end(), {b.first, b.low, b.high, b.last});
    if (b.any_gap) kept.push_back(b.gap);
    std::sort(kept.begin() + static_cast<std::ptrdiff_t>(from), kept.end(),
              [](const Kept& a, const Kept& c) { return earlier(a.step, a.order, c.step, c.order); });
    kept.erase(std::unique(kept.begin() + static_cast<std::ptrdiff_t>(from), kept.end(),
                           [](const Kept& a, const Kept& c) { return a.order == c.order; }),
               kept.end());
  }
  for (const Kept& p : kept) {
    steps.push_back(p.step);
    values.push_back(p.value);
  }
}

}  // namespace rldk::stats
