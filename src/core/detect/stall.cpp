// The stall kind: learning that stops while it should still be going on. A DPO run whose loss and reward margin
// freeze early, with the learning rate at its peak, keeps its minibatch noise, so a test for a loss that stopped
// moving at all (the flat kind) does not see it, and the level it froze at is often one where healthy runs also end.
// What tells it apart is its course. Judged once the data ends, on the whole run kept in bounded memory
// (stats::ThinnedSeries), over the stretch from start_fraction of the run to the last point where the learning rate
// (the `lr` context input) is at least lr_fraction of its peak (to the end when no rate is logged):
//   - the objective (first input: the loss) shows no trend (Mann-Kendall |Z| under max_z), and
//   - the progress metric (second input: the reward margin) shows none either,
// over at least stretch_points logged points (counted as logged, not scaled by the logging interval: a trend test
// over 20-50 points cannot tell a slow healthy fall from none; on the benchmark's short clean DPO runs it read 8 as
// stalled). A loss that rises or a margin that falls is another failure, not a stall. A run that converged keeps a
// growing margin (healthy DPO margins climb from 3 to 10 while the loss sits near 0.06), and a run whose rate decays
// is judged only while the rate is high, so settling as the rate anneals is no stall. The onset is where the
// objective stopped moving: after the last point before the stretch outside the stretch's own band.
#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "detect/kind_support.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk::detect {
namespace {

class Stall final : public Detector {
 public:
  explicit Stall(const DetectorSpec& s)
      : Detector(s),
        objective_(capacity(s)),
        progress_(capacity(s)),
        lr_(capacity(s)),
        stretch_points_(static_cast<size_t>(std::max(10.0, s.param("stretch_points", 60)))),
        max_z_(s.param("max_z", 2)),
        start_fraction_(std::clamp(s.param("start_fraction", 0.1), 0.0, 0.9)),
        lr_fraction_(s.param("lr_fraction", 0.5)) {}
  void reset() override {
    finish();
    objective_.reset();
    progress_.reset();
    lr_.reset();
    lr_seen_ = false;
  }
  void observe(int64_t step, const double* x) override {
    if (!std::isfinite(x[0]) || !std::isfinite(x[1])) return;
    objective_.push(step, x[0]);
    progress_.push(step, x[1]);
    // A rate not logged (yet) counts as high: the stretch then runs to the end.
    bool has_lr = spec_.inputs.size() > 2 && std::isfinite(x[2]);
    lr_seen_ = lr_seen_ || has_lr;
    lr_.push(step, has_lr ? x[2] : 0.0);
    last_step_ = step;
  }
  void finish() override {
    judge();
    objective_.reset();
    progress_.reset();
    lr_.reset();
    lr_seen_ = false;
  }

 private:
  static size_t capacity(const DetectorSpec& s) {
    return static_cast<size_t>(std::max(16.0, s.param("capacity", 512)));
  }
  void judge() {
    auto objective = objective_.values();
    auto progress = progress_.values();
    auto lr = lr_.values();
    size_t n = objective.size();
    if (objective_.raw_points() < stretch_points_ || n < 10) return;
    size_t from = static_cast<size_t>(std::lround(start_fraction_ * static_cast<double>(n)));
    size_t to = n;  // one past the stretch's last point
    if (lr_seen_) {
      double peak = *std::max_element(lr.begin(), lr.end());
      if (!(peak > 0)) return;
      while (to > 0 && !(lr[to - 1] >= lr_fraction_ * peak)) --to;
    }
    if (to <= from) return;
    // Kept points each stand for raw_points / n logged ones.
    double raw_per_kept = static_cast<double>(objective_.raw_points()) / static_cast<double>(n);
    if (static_cast<double>(to - from) * raw_per_kept < static_cast<double>(stretch_points_)) return;
    double objective_z = stats::mann_kendall(objective.subspan(from, to - from)).z;
    double progress_z = stats::mann_kendall(progress.subspan(from, to - from)).z;
    // Either one moved: learning goes on (a loss that fell, a margin that grew), or something else happened.
    if (std::fabs(objective_z) >= max_z_ || std::fabs(progress_z) >= max_z_) return;
    // Where it stopped: after the last point before the stretch that lies outside the stretch's own band (its
    // median +- ONSET_SIGMAS robust sigmas); the run's first point when none does (a loss that never left ln 2).
    std::vector<double> stretch(objective.begin() + static_cast<std::ptrdiff_t>(from),
                                objective.begin() + static_cast<std::ptrdiff_t>(to));
    double median = 0, sigma = 0;
    stats::median_and_sigma(stretch, median, sigma);
    size_t onset = from;
    while (onset > 0 && std::fabs(objective[onset - 1] - median) <= ONSET_SIGMAS * sigma) --onset;
    auto steps = objective_.steps();
    std::string course = onset == 0 ? "never improved"
                                    : "stopped improving at about step " + std::to_string(steps[onset]);
    alarm(last_step_);
    report(steps[onset], steps[to - 1], steps[onset], objective[onset],
           {{"level", median},
            {"from_step", static_cast<double>(steps[from])},
            {"to_step", static_cast<double>(steps[to - 1])},
            {"objective_trend_z", objective_z},
            {"progress_trend_z", progress_z},
            {"points", static_cast<double>(objective_.raw_points())}},
           {{"course", course}});
  }
  static constexpr double ONSET_SIGMAS = 3;
  stats::ThinnedSeries objective_, progress_, lr_;
  size_t stretch_points_;
  double max_z_, start_fraction_, lr_fraction_;
  bool lr_seen_ = false;
  int64_t last_step_ = 0;
};

}  // namespace

std::unique_ptr<Detector> make_stall(const DetectorSpec& spec) { return std::make_unique<Stall>(spec); }

}  // namespace rldk::detect
