// Sequential change detectors on standardised values: the one definition of CUSUM and Page-Hinkley in rldk, used by
// the rules' change detectors, the level_shift detector kind and the first-divergence test of `rldk diff`.
// Both are O(1) per value and allocate nothing; callers standardise (z = (x - reference) / scale) and decide what
// an alarm means.
#pragma once

#include <cstdint>

namespace rldk::stats {

// Two-sided tabular CUSUM (Page 1954): C+ = max(0, C+ + z - k), C- = max(0, C- - z - k), where k (the allowance)
// is half the shift worth detecting. A side alarms when it exceeds a decision interval h.
// The step where a side last left zero estimates when the change began (the maximum-likelihood change time under
// a shift model), which is what a finding reports as its onset, not the later alarm step.
struct Cusum {
  double up = 0, down = 0;
  int64_t up_start = 0, down_start = 0;

  // Clears both sides (the start estimates are refreshed by the next update).
  void reset() { up = down = 0; }
  // The start of a side is the last step at which it was within one allowance k of zero: noise keeps a side
  // hovering just above zero before a change, and "last exactly zero" would date the change too early.
  void update(double z, double k, int64_t step = 0);
  bool up_exceeds(double h) const { return up > h; }
  bool down_exceeds(double h) const { return down > h; }
};

// Page-Hinkley test on standardised values, both directions: with m the running mean of z,
// S+ = max(0, alpha S+ + (z - m - delta)) and S- = max(0, alpha S- + (m - z - delta)); a side alarms when it reaches
// the threshold. delta is the drift tolerated per value; alpha < 1 forgets old evidence.
struct PageHinkley {
  double up = 0, down = 0;
  double mean = 0;  // running mean of every z seen since the last full reset
  uint64_t count = 0;

  void reset() { *this = PageHinkley{}; }
  // After an alarm: the sums start afresh, the running mean keeps its history.
  void restart() { up = down = 0; }
  void update(double z, double delta, double alpha);
  bool up_reaches(double threshold) const { return up >= threshold; }
  bool down_reaches(double threshold) const { return down >= threshold; }
};

}  // namespace rldk::stats
