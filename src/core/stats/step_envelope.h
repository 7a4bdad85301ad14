// A series reduced in bounded memory to what a line chart of it draws: the steps are cut into at most `capacity`
// buckets of equal width, and each bucket keeps its first, lowest, highest and last point and one non-finite point
// (which breaks the line). Spikes survive, which striding or averaging would drop. When a new point needs a bucket
// beyond the capacity, the width doubles and neighbouring buckets merge, so any order of steps (restarts included)
// is accepted and a run of at most `capacity` distinct steps (from its first) is kept whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace rldk::stats {

class StepEnvelope {
 public:
  explicit StepEnvelope(size_t capacity = 1024) : capacity_(capacity < 2 ? 2 : capacity) {}
  StepEnvelope(const StepEnvelope&) = delete;  // last_ points into buckets_
  StepEnvelope& operator=(const StepEnvelope&) = delete;
  void push(int64_t step, double value);
  // The kept points in step order (points of one step in arrival order).
  void points(std::vector<int64_t>& steps, std::vector<double>& values) const;

 private:
  struct Kept {
    int64_t step = 0;
    double value = 0;
    uint64_t order = 0;  // arrival
  };
  struct Bucket {
    bool any_finite = false, any_gap = false;
    Kept first, last, low, high, gap;
  };
  static void add(Bucket& b, const Kept& p);
  static void merge(Bucket& into, const Bucket& from);
  int64_t key(int64_t step) const;
  void grow();
  size_t capacity_;
  bool started_ = false;
  int64_t origin_ = 0, width_ = 1;
  uint64_t arrivals_ = 0;
  std::map<int64_t, Bucket> buckets_;
  // The bucket the last point went to: consecutive points of a series nearly always share it or open the next.
  std::map<int64_t, Bucket>::iterator last_ = buckets_.end();
  int64_t last_key_ = 0;
};

}  // namespace rldk::stats
