// The distinct steps of a run, counted as its points stream in. Within a segment steps only grow, so the set is kept
// as arithmetic progressions (first, stride, count) with disjoint spans: a run logged every 10 steps is one
// progression however long it is, and memory grows only with the irregularities of its steps (restarts, a change
// of logging interval, steps that are token counts). A step at or below the largest one seen is looked up, and
// inserted (splitting the progression whose span it falls in) if it is new.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rldk::detect {

class StepSet {
 public:
  void insert(int64_t step) {
    if (size_ > 0 && step == largest_) return;  // the common case: another metric of the step just counted
    insert_new(step);
  }
  uint64_t size() const { return size_; }
  // Progressions held: what the set costs (a test of its memory bound).
  size_t progressions() const { return runs_.size(); }

 private:
  struct Progression {
    int64_t first = 0;
    int64_t stride = 0;  // 0 while it holds one step
    uint64_t count = 1;
    int64_t last() const { return first + stride * static_cast<int64_t>(count - 1); }
  };
  void insert_new(int64_t step);
  void insert_inside(int64_t step);
  std::vector<Progression> runs_;  // by first step, spans disjoint
  uint64_t size_ = 0;
  int64_t largest_ = 0;
};

}  // namespace rldk::detect
