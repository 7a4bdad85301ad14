// The rule file's own change detectors (detector: {kind: cusum | page_hinkley, ...}; docs/rules.md): a reference
// learned from the first `warmup` values (their mean, and 1.4826 x MAD as a robust scale), then CUSUM or
// Page-Hinkley (stats/cusum.h) on the standardised values.
#include <algorithm>
#include <cmath>
#include <vector>

#include "rules/rule_detector.h"
#include "stats/cusum.h"
#include "stats/robust.h"

namespace rldk::rules {
namespace {

// A flat warm-up (MAD 0) would make any wiggle infinite: the scale is at least this fraction of the level, and at
// least ABSOLUTE_SCALE_FLOOR for a level of zero.
constexpr double RELATIVE_SCALE_FLOOR = 1e-3;
constexpr double ABSOLUTE_SCALE_FLOOR = 1e-12;

class ChangeDetectorState final : public RuleDetector {
 public:
  explicit ChangeDetectorState(const ChangeDetector& d) : d_(d), cusum_(d.kind == "cusum") {}

  void reset() override {
    warm_.clear();
    armed_ = false;
    cusum_state_.reset();
    page_hinkley_.reset();
  }

  bool observe(int64_t /*step*/, double x, const RunMetrics& /*run*/) override {
    if (!std::isfinite(x)) return false;  // non-finite values have their own guard
    if (!armed_) {
      warm_.push_back(x);
      if (static_cast<int>(warm_.size()) >= d_.warmup) arm();
      return false;
    }
    double z = (x - mean_) / scale_;
    bool up = false, down = false;
    if (cusum_) {
      cusum_state_.update(z, d_.k);
      up = cusum_state_.up_exceeds(d_.h);
      down = cusum_state_.down_exceeds(d_.h);
    } else {
      page_hinkley_.update(z, d_.delta, d_.alpha);
      up = page_hinkley_.up_reaches(d_.threshold);
      down = page_hinkley_.down_reaches(d_.threshold);
    }
    bool alarm = (up && d_.direction != "down") || (down && d_.direction != "up");
    if (alarm) {  // accumulate afresh after an alarm
      cusum_state_.reset();
      page_hinkley_.restart();
    }
    return alarm;
  }

  bool finish() override { return false; }

 private:
  void arm() {
    mean_ = stats::mean(warm_);
    double median = 0, sigma = 0;
    stats::median_and_sigma(warm_, median, sigma);
    scale_ = std::max(sigma, std::max(std::fabs(mean_) * RELATIVE_SCALE_FLOOR, ABSOLUTE_SCALE_FLOOR));
    armed_ = true;
    warm_.clear();
    warm_.shrink_to_fit();
  }

  ChangeDetector d_;
  bool cusum_;  // else Page-Hinkley
  std::vector<double> warm_;  // values collected to learn the reference
  bool armed_ = false;
  double mean_ = 0.0, scale_ = 1.0;
  stats::Cusum cusum_state_;
  stats::PageHinkley page_hinkley_;
};

}  // namespace

std::unique_ptr<RuleDetector> make_change_detector(const ChangeDetector& detector) {
  return std::make_unique<ChangeDetectorState>(detector);
}

}  // namespace rldk::rules
