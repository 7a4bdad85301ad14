// A scan catalog detector driven by a rule (detector: ID): the same detect::Detector instance the scan would build,
// fed point by point. The rule's watched metric drives it as the scan's first input does; the other inputs are the
// run's other metrics, each carrying its latest value forward, as the scan's driver does. The rule fires when the
// detector confirms an episode (Detector::alarm), not when the scan would report it at the episode's end.
#include <algorithm>
#include <limits>
#include <vector>

#include "detect/kinds.h"
#include "rldk/scan.h"
#include "rules/rule_detector.h"

namespace rldk::rules {
namespace {

constexpr double NOT_A_NUMBER = std::numeric_limits<double>::quiet_NaN();

class CatalogDetector final : public RuleDetector {
 public:
  CatalogDetector(const DetectorSpec& spec, std::unique_ptr<detect::Detector> detector, const std::string& metric)
      : spec_(spec), detector_(std::move(detector)), x_(spec.inputs.size(), NOT_A_NUMBER),
        chosen_(spec.inputs.size(), NONE) {
    // Until the run logs an input, the detector knows it by its first candidate name.
    detector_->metric_names.resize(spec.inputs.size());
    for (size_t r = 0; r < spec.inputs.size(); ++r) detector_->metric_names[r] = spec.inputs[r].second.front();
    detector_->metric_names.front() = metric;
  }

  void reset() override {
    detector_->reset();
    std::fill(x_.begin() + 1, x_.end(), NOT_A_NUMBER);
  }

  bool observe(int64_t step, double value, const RunMetrics& run) override {
    x_[0] = value;
    for (size_t r = 1; r < x_.size(); ++r) {
      if (auto latest = other_input(r, step, run)) x_[r] = *latest;
    }
    detector_->observe(step, x_.data());
    return take_alarms();
  }

  bool finish() override {
    detector_->finish();
    return take_alarms();
  }

 private:
  static constexpr size_t NONE = static_cast<size_t>(-1);

  // The latest value of input r. The first of its candidate metrics the run logs is that input from then on, as in
  // the scan, which picks the first candidate the run has.
  std::optional<double> other_input(size_t r, int64_t step, const RunMetrics& run) {
    const std::vector<std::string>& candidates = spec_.inputs[r].second;
    if (chosen_[r] != NONE) return run.latest(candidates[chosen_[r]], step);
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (auto latest = run.latest(candidates[c], step)) {
        chosen_[r] = c;
        detector_->metric_names[r] = candidates[c];
        return latest;
      }
    }
    return std::nullopt;
  }

  // The rule acts on confirmations; the findings the detector also builds (for the scan) are dropped, so memory
  // stays bounded however long the monitor runs.
  bool take_alarms() {
    bool alarmed = !detector_->alarms().empty();
    detector_->alarms().clear();
    detector_->findings().clear();
    return alarmed;
  }

  const DetectorSpec& spec_;  // in the built-in catalog, which lives as long as the program
  std::unique_ptr<detect::Detector> detector_;
  std::vector<double> x_;       // this point's value of every input (the scan's x)
  std::vector<size_t> chosen_;  // per input: the candidate the run logs, NONE before it has logged one
};

}  // namespace

std::unique_ptr<RuleDetector> make_catalog_detector(const ChangeDetector& detector, const std::string& metric) {
  const DetectorSpec* spec = builtin_detector_catalog().find(detector.catalog_id);
  if (spec == nullptr) return nullptr;  // the rule file's parser names unknown ids
  auto instance = detect::make_detector(*spec);
  if (!instance) return nullptr;
  return std::make_unique<CatalogDetector>(*spec, std::move(instance), metric);
}

}  // namespace rldk::rules
