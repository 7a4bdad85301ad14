// What decides a rule before its condition is read: a `detector:` of the rule file, one instance per (rule, run,
// metric). Two families: the rule file's own change detectors (cusum, page_hinkley; change_detector.cpp) and the
// scan's catalog detectors named by id (catalog_detector.cpp), which run with exactly the scan's code and
// parameters, so `rldk monitor` raises live what `rldk scan` would report afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rldk/rules.h"

namespace rldk::rules {

// The other metrics of the run a detector watches (a catalog detector with several inputs reads them).
class RunMetrics {
 public:
  virtual ~RunMetrics() = default;
  struct Logged {
    double value;
    int64_t step;  // where it was logged
  };
  // The latest value of `name` logged at or before `step` in the current segment; nullopt when there is none.
  virtual std::optional<Logged> latest(const std::string& name, int64_t step) const = 0;
  // A training setting the run printed (RuleEngine::setting); nullopt when it printed none.
  virtual std::optional<double> setting(const std::string& /*name*/) const { return std::nullopt; }
};

class RuleDetector {
 public:
  virtual ~RuleDetector() = default;
  // A restart (the run's steps went backwards): learn afresh.
  virtual void reset() = 0;
  // The watched metric's value at `step`; true when the detector alarms at this point.
  virtual bool observe(int64_t step, double value, const RunMetrics& run) = 0;
  // End of data: true when closing what is still open confirms an episode (a trend judged on the whole run).
  virtual bool finish() = 0;
};

// The detector of a rule watching `metric`; nullptr when the rule has none.
std::unique_ptr<RuleDetector> make_rule_detector(const std::optional<ChangeDetector>& detector,
                                                 const std::string& metric);

std::unique_ptr<RuleDetector> make_change_detector(const ChangeDetector& detector);
std::unique_ptr<RuleDetector> make_catalog_detector(const ChangeDetector& detector, const std::string& metric);

}  // namespace rldk::rules
