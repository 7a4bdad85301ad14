#include "rules/rule_detector.h"

namespace rldk::rules {

std::unique_ptr<RuleDetector> make_rule_detector(const std::optional<ChangeDetector>& detector,
                                                 const std::string& metric) {
  if (!detector) return nullptr;
  if (!detector->catalog_id.empty()) return make_catalog_detector(*detector, metric);
  return make_change_detector(*detector);
}

}  // namespace rldk::rules
