#include "reward/report_parts.h"

#include <cmath>

#include "reward/sample_table.h"

namespace rldk::reward {

Json json_number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json correlation_json(const CorrelationEstimate& c) {
  Json j;
  j["r"] = json_number(c.r);
  j["n"] = c.n;
  j["ci_low"] = json_number(c.ci_low);
  j["ci_high"] = json_number(c.ci_high);
  j["p_value"] = json_number(c.p_value);
  return j;
}

std::vector<std::pair<const char*, const RewardCheck*>> checks_of(const RewardColumnHealth& c) {
  return {{"saturation", &c.saturation},         {"zero_variance_groups", &c.zero_variance_groups},
          {"length_bias", &c.length_bias},       {"drift", &c.drift},
          {"gold", &c.gold},                     {"suspicious_samples", &c.suspicious_samples},
          {"shortcut_features", &c.shortcut_features}};
}

std::string p_text(double p) {
  // A p-value below the smallest double prints as 0, which reads as "impossible" rather than "tiny".
  return p == 0 ? "< 1e-300" : "= " + format_number(p, 2);
}

std::string correlation_text(const CorrelationEstimate& c) {
  if (std::isnan(c.r)) return "n/a";
  return format_number(c.r) + " [" + format_number(c.ci_low) + ", " + format_number(c.ci_high) +
         "], p " + p_text(c.p_value) + ", n = " + std::to_string(c.n);
}

}  // namespace rldk::reward
