#include "detect/step_set.h"

#include <algorithm>
#include <iterator>

namespace rldk::detect {

void StepSet::insert_new(int64_t step) {
  if (runs_.empty()) {
    runs_.push_back({step, 0, 1});
    size_ = 1;
    largest_ = step;
    return;
  }
  Progression& back = runs_.back();
  int64_t last = back.last();
  if (step == last) return;
  if (step < last) {
    insert_inside(step);
    return;
  }
  ++size_;
  largest_ = step;
  if (back.count == 1) {
    back.stride = step - back.first;
    back.count = 2;
  } else if (step - last == back.stride) {
    ++back.count;
  } else {
    runs_.push_back({step, 0, 1});
  }
}

void StepSet::insert_inside(int64_t step) {
  // The progression whose span may hold the step: the last one that starts at or before it.
  auto after = std::upper_bound(runs_.begin(), runs_.end(), step,
                                [](int64_t s, const Progression& p) { return s < p.first; });
  if (after == runs_.begin()) {
    runs_.insert(after, Progression{step, 0, 1});
    ++size_;
    return;
  }
  Progression& p = *std::prev(after);
  if (step <= p.last()) {
    int64_t offset = step - p.first;
    if (p.stride == 0 || offset % p.stride == 0) return;  // already there
    // Split p around the step so that spans stay disjoint: [first .. below step], {step}, [above step .. last].
    uint64_t below = static_cast<uint64_t>(offset / p.stride) + 1;
    Progression upper{p.first + p.stride * static_cast<int64_t>(below), p.stride, p.count - below};
    if (upper.count == 1) upper.stride = 0;
    p.count = below;
    if (p.count == 1) p.stride = 0;
    size_t at = static_cast<size_t>(std::distance(runs_.begin(), after));
    runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(at), {Progression{step, 0, 1}, upper});
  } else {
    runs_.insert(after, Progression{step, 0, 1});
  }
  ++size_;
}

}  // namespace rldk::detect
