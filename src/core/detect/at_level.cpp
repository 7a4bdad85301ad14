// The at_level kind: a metric that stayed at one known level for the whole run, the value its definition gives
// before anything is learned (a DPO-style sigmoid loss is ln 2 = 0.693 while the policy still equals its
// reference). A notebook table that logs only the training loss shows a preference run that never learned no other
// way: no margins, no rewards, no gradient norm. Judged once the data ends, on the whole run kept in bounded memory
// (stats::ThinnedSeries): the run is cut into `blocks` consecutive blocks, and the median of every block is within
// `band` of `level`. A block's median sees through single noisy batches (a batch-1 DPO loss swings 0.65-0.71 around
// ln 2); a run that learns leaves the level in its later blocks (a slow healthy DPO run ends at 0.64). The onset is
// the first point; the episode runs to the last. With an `unless` context input that the run logs, this kind defers
// to it and reports nothing: a DPO run at beta 0.05 whose accuracy climbed 0.48 -> 0.9 kept its loss at 0.68, the
// margin saying what the loss at a small beta cannot.
#include <algorithm>
#include <cmath>

#include "detect/kind_support.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk::detect {
namespace {

class AtLevel final : public Detector {
 public:
  explicit AtLevel(const DetectorSpec& s)
      : Detector(s), series_(static_cast<size_t>(std::max(16.0, s.param("capacity", 512)))) {
    level_ = s.param("level", 0.0);
    band_ = std::fabs(s.param("band", 0.0));
    blocks_ = static_cast<size_t>(std::max(2.0, s.param("blocks", 10)));
    min_points_ = static_cast<size_t>(std::max(3.0, s.param("min_points", 20)));
    for (size_t i = 1; i < s.inputs.size(); ++i) {
      if (s.inputs[i].first == "unless") unless_inputs_.push_back(i);
    }
  }
  void reset() override {
    finish();
    series_.reset();
  }
  void observe(int64_t step, const double* x) override {
    for (size_t i : unless_inputs_) deferred_ = deferred_ || std::isfinite(x[i]);
    if (!std::isfinite(x[0])) return;
    if (series_.raw_points() == 0) first_step_ = step;
    series_.push(step, x[0]);
    last_step_ = step;
  }
  void finish() override {
    auto values = series_.values();
    size_t n = values.size(), blocks = std::min(blocks_, n);
    if (!deferred_ && series_.raw_points() >= min_points_ && blocks >= 2) {
      double low = 0, high = 0;
      bool held = true;
      std::vector<double> block;
      for (size_t b = 0; b < blocks && held; ++b) {
        size_t from = b * n / blocks, to = (b + 1) * n / blocks;
        block.assign(values.begin() + static_cast<std::ptrdiff_t>(from), values.begin() + static_cast<std::ptrdiff_t>(to));
        double median = stats::median_in_place(block);
        held = std::fabs(median - level_) <= band_;
        low = b == 0 ? median : std::min(low, median);
        high = b == 0 ? median : std::max(high, median);
      }
      if (held) {
        alarm(last_step_);
        report(first_step_, last_step_, first_step_, values.front(),
               {{"level", level_}, {"band", band_}, {"low", low}, {"high", high},
                {"points", static_cast<double>(series_.raw_points())}});
      }
    }
    series_.reset();
    deferred_ = false;
  }

 private:
  stats::ThinnedSeries series_;
  double level_ = 0, band_ = 0;
  size_t blocks_, min_points_;
  int64_t first_step_ = 0, last_step_ = 0;
  std::vector<size_t> unless_inputs_;  // context inputs whose being logged makes this detector stand down
  bool deferred_ = false;
};

}  // namespace

std::unique_ptr<Detector> make_at_level(const DetectorSpec& spec) { return std::make_unique<AtLevel>(spec); }

}  // namespace rldk::detect
