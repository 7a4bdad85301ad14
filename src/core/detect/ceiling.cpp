// The ceiling kind: a batch mean pinned at exactly its own largest value, step after step. The mean length of
// several completions lands on the same number again and again only when every completion was cut at that length:
// the run hit a hard cap it does not log (older TRL/Unsloth consoles print completion_length but no clipped ratio
// and no max length). Judged once the data ends, in O(1) memory: the largest finite value, and the points exactly
// equal to it (counted afresh whenever a larger one appears); reported when at least min_points of them make up at
// least min_share of the run's points. The onset is the first point at the ceiling, the end the last. A live monitor
// is told as soon as the points so far meet that test (a run cut at its cap from the first step is pinned there
// from its fifth logged point, not only at its end); the scan's finding keeps that step as its alarm when the same
// ceiling still holds at the end. A larger value later is another ceiling, judged afresh.
//
// The ceiling is an inference for logs that do not say how many completions were cut. With a `clipped` context
// input (the clipped fraction) that the run logs, the log says it: this kind defers to it and reports nothing (the
// `truncation` detector judges the fraction). A policy that settles on answers of one fixed length (a 20-token JSON
// reply, under a cap of 128, with a clipped fraction of 0 at every step) repeats its mean as exactly as a cut one.
#include <algorithm>
#include <cmath>
#include <limits>

#include "detect/kind_support.h"

namespace rldk::detect {
namespace {

class Ceiling final : public Detector {
 public:
  explicit Ceiling(const DetectorSpec& s) : Detector(s) {
    min_points_ = static_cast<int64_t>(std::max(2.0, s.param("min_points", 5)));
    min_share_ = s.param("min_share", 0.5);
    for (size_t i = 1; i < s.inputs.size(); ++i) {
      if (s.inputs[i].first == "clipped") clipped_input_ = i;
    }
  }
  void reset() override {
    finish();
    points_ = at_max_ = 0;
    max_ = -std::numeric_limits<double>::infinity();
    clipped_logged_ = alarmed_ = false;
  }
  void observe(int64_t step, const double* x) override {
    if (clipped_input_ && std::isfinite(x[clipped_input_])) clipped_logged_ = true;
    double v = x[0];
    if (!std::isfinite(v)) return;
    ++points_;
    if (v > max_) {
      max_ = v;
      at_max_ = 0;
      first_ = step;
      alarmed_ = false;
    }
    if (v == max_) {
      ++at_max_;
      last_ = step;
    }
    if (!alarmed_ && pinned()) {
      alarmed_ = true;
      alarm_step_ = step;
      alarm(step);
    }
  }
  void finish() override {
    if (pinned()) {
      if (!alarmed_) {
        alarm_step_ = last_;
        alarm(last_);
      }
      report(first_, last_, first_, max_,
             {{"level", max_}, {"points", static_cast<double>(at_max_)}, {"of", static_cast<double>(points_)},
              {"share", static_cast<double>(at_max_) / static_cast<double>(points_)},
              {"alarm_step", static_cast<double>(alarm_step_)}});
    }
    points_ = at_max_ = 0;
    max_ = -std::numeric_limits<double>::infinity();
    clipped_logged_ = alarmed_ = false;
  }

 private:
  int64_t min_points_;
  double min_share_;
  // Enough points of the run so far sit at its largest value (and the run logs no clipped fraction).
  bool pinned() const {
    return !clipped_logged_ && at_max_ >= min_points_ &&
           static_cast<double>(at_max_) >= min_share_ * static_cast<double>(points_);
  }
  int64_t points_ = 0, at_max_ = 0, first_ = 0, last_ = 0, alarm_step_ = 0;
  bool alarmed_ = false;  // this ceiling has been raised to a live monitor
  double max_ = -std::numeric_limits<double>::infinity();
  size_t clipped_input_ = 0;  // 0: no such context input (input 0 is the length)
  bool clipped_logged_ = false;
};

}  // namespace

std::unique_ptr<Detector> make_ceiling(const DetectorSpec& spec) { return std::make_unique<Ceiling>(spec); }

}  // namespace rldk::detect
