// Loads RewardHealthThresholds from YAML (data/reward_health.yaml is the built-in copy). Strict: every key must be
// present and no other key may appear, so a misspelt threshold is an error rather than a silent default.
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <set>
#include <stdexcept>

#include "model/embedded_data.h"
#include "reward/text_features.h"
#include "rldk/reward_health.h"

namespace rldk {
namespace {

class Reader {
 public:
  explicit Reader(const YAML::Node& root) : root_(root) {}

  template <class T>
  void get(const std::string& section, const std::string& key, T& out) {
    std::string path = section.empty() ? key : section + "." + key;
    seen_.insert(path);
    YAML::Node node = section.empty() ? root_[key] : root_[section][key];
    if (!node || !node.IsScalar()) throw std::runtime_error("missing threshold '" + path + "'");
    try {
      out = node.as<T>();
    } catch (const YAML::Exception&) {
      throw std::runtime_error("threshold '" + path + "' must be a number, not '" + node.Scalar() + "'");
    }
  }

  // The `features:` section: a mapping of feature name -> list of phrases, in file order.
  void get_phrases(const std::string& section, std::vector<ShortcutPhraseFeature>& out) {
    YAML::Node node = root_[section];
    if (!node) throw std::runtime_error("missing section '" + section + "'");
    seen_.insert(section);
    if (node.IsNull()) return;  // "features:" with nothing under it: no phrase features
    if (!node.IsMap()) throw std::runtime_error("'" + section + "' must map feature names to lists of phrases");
    for (const auto& entry : node) {
      ShortcutPhraseFeature f;
      f.name = entry.first.as<std::string>();
      std::string path = section + "." + f.name;
      seen_.insert(path);
      if (!entry.second.IsSequence() || entry.second.size() == 0) {
        throw std::runtime_error("'" + path + "' must be a non-empty list of phrases");
      }
      for (const auto& phrase : entry.second) {
        if (!phrase.IsScalar() || phrase.Scalar().empty()) {
          throw std::runtime_error("'" + path + "' has an empty phrase");
        }
        f.phrases.push_back(phrase.Scalar());
      }
      out.push_back(std::move(f));
    }
  }

  // Keys in the text that no get() asked for.
  void reject_unknown() const {
    for (const auto& top : root_) {
      auto name = top.first.as<std::string>();
      if (top.second.IsMap()) {
        for (const auto& inner : top.second) {
          std::string path = name + "." + inner.first.as<std::string>();
          if (!seen_.contains(path)) throw std::runtime_error("unknown threshold '" + path + "'");
        }
      } else if (!seen_.contains(name)) {
        throw std::runtime_error("unknown threshold '" + name + "'");
      }
    }
  }

 private:
  YAML::Node root_;
  std::set<std::string> seen_;
};

}  // namespace

Result<RewardHealthThresholds> reward_health_thresholds_from_yaml(std::string_view text, const std::string& origin) {
  RewardHealthThresholds t;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return Error{ErrorCode::invalid_argument, "reward health thresholds must be a YAML mapping", origin};
    Reader r(root);
    r.get("", "confidence", t.confidence);
    r.get("saturation", "bound_eps", t.saturation_bound_eps);
    r.get("saturation", "late_window", t.saturation_late_window);
    r.get("saturation", "warning", t.saturation_warning);
    r.get("saturation", "critical", t.saturation_critical);
    r.get("saturation", "binary_warning", t.saturation_binary_warning);
    r.get("saturation", "binary_critical", t.saturation_binary_critical);
    r.get("zero_variance_groups", "share", t.zero_variance_share);
    r.get("zero_variance_groups", "excess_z", t.zero_variance_excess_z);
    r.get("length_bias", "min_samples", t.length_min_samples);
    r.get("length_bias", "within_spearman_warning", t.length_spearman_warning);
    r.get("length_bias", "within_spearman_critical", t.length_spearman_critical);
    r.get("length_bias", "p_value", t.length_p_value);
    r.get("length_bias", "length_share_warning", t.length_share_warning);
    r.get("length_bias", "window", t.length_window);
    r.get("length_bias", "bins", t.length_bins);
    r.get("length_bias", "min_bin_samples", t.length_min_bin_samples);
    r.get("length_bias", "min_gain_std", t.length_min_gain_std);
    r.get("drift", "window", t.drift_window);
    r.get("drift", "min_window_samples", t.drift_min_window_samples);
    r.get("drift", "p_value", t.drift_p_value);
    r.get("gold", "late_window", t.gold_late_window);
    r.get("gold", "min_steps", t.gold_min_steps);
    r.get("gold", "p_value", t.gold_p_value);
    r.get("gold", "fit_min_points", t.gold_fit_min_points);
    r.get("gold", "fit_min_r2", t.gold_fit_min_r2);
    r.get("gold", "past_peak_drop", t.gold_past_peak_drop);
    r.get("suspicious_samples", "count", t.suspicious_count);
    r.get("suspicious_samples", "length_z", t.suspicious_length_z);
    r.get("suspicious_samples", "repetition", t.suspicious_repetition);
    r.get("shortcut", "min_samples", t.shortcut_min_samples);
    r.get("shortcut", "r2_warning", t.shortcut_r2_warning);
    r.get("shortcut", "r2_critical", t.shortcut_r2_critical);
    r.get("shortcut", "p_value", t.shortcut_p_value);
    r.get("shortcut", "quotes", t.shortcut_quotes);
    r.get("calibration", "min_pairs", t.calibration_min_pairs);
    r.get("calibration", "bins", t.calibration_bins);
    r.get("calibration", "ece_warning", t.calibration_ece_warning);
    r.get("calibration", "ece_critical", t.calibration_ece_critical);
    r.get("calibration", "accuracy_p_value", t.calibration_accuracy_p_value);
    r.get("calibration", "resamples", t.calibration_resamples);
    r.get("calibration", "quotes", t.calibration_quotes);
    r.get_phrases("features", t.shortcut_phrases);
    r.reject_unknown();
  } catch (const std::exception& e) {
    return Error{ErrorCode::invalid_argument, e.what(), origin};
  }
  // Early and late windows must not overlap; a late window may span the whole run.
  bool windows_ok = t.length_window > 0 && t.length_window <= 0.5 && t.drift_window > 0 && t.drift_window <= 0.5 &&
                    t.saturation_late_window > 0 && t.saturation_late_window <= 1 && t.gold_late_window > 0 &&
                    t.gold_late_window <= 1;
  if (!windows_ok || !(t.confidence > 0 && t.confidence < 1) || t.length_bins < 2) {
    return Error{ErrorCode::invalid_argument,
                 "length_bias.window and drift.window must be in (0, 0.5], saturation.late_window and "
                 "gold.late_window in (0, 1], confidence in (0, 1) and length_bias.bins at least 2",
                 origin};
  }
  bool shortcut_ok = t.shortcut_r2_warning > 0 && t.shortcut_r2_warning <= t.shortcut_r2_critical &&
                     t.shortcut_r2_critical < 1 && t.shortcut_p_value > 0 && t.shortcut_p_value < 1;
  if (!shortcut_ok) {
    return Error{ErrorCode::invalid_argument,
                 "shortcut thresholds need 0 < r2_warning <= r2_critical < 1 and p_value in (0, 1)", origin};
  }
  bool calibration_ok = t.calibration_bins >= 1 && t.calibration_ece_warning > 0 &&
                        t.calibration_ece_warning <= t.calibration_ece_critical && t.calibration_ece_critical < 0.5 &&
                        t.calibration_accuracy_p_value > 0 && t.calibration_accuracy_p_value < 1 &&
                        t.calibration_resamples >= 10;
  if (!calibration_ok) {
    return Error{ErrorCode::invalid_argument,
                 "calibration thresholds need bins >= 1, 0 < ece_warning <= ece_critical < 0.5, accuracy_p_value in "
                 "(0, 1) and resamples >= 10", origin};
  }
  // Phrase features share one namespace with the built-in ones (they are columns of one table), and the joint fit
  // solves a k x k system per reward column: a few dozen features is plenty.
  std::set<std::string> names(reward::BUILTIN_FEATURES.begin(), reward::BUILTIN_FEATURES.end());
  for (const auto& f : t.shortcut_phrases) {
    if (f.name.empty() || !names.insert(f.name).second) {
      return Error{ErrorCode::invalid_argument, "feature name '" + f.name + "' is empty or used twice (built-in "
                   "features: log_length, repetition, list_items, headers, code_blocks, non_ascii_share)", origin};
    }
  }
  if (names.size() > 64) {
    return Error{ErrorCode::invalid_argument, "at most 64 shortcut features (built-in ones included)", origin};
  }
  return t;
}

const RewardHealthThresholds& default_reward_health_thresholds() {
  static const RewardHealthThresholds thresholds = [] {
    auto parsed = reward_health_thresholds_from_yaml(embedded_file("reward_health.yaml"), "data/reward_health.yaml");
    // The file is compiled in and covered by the unit tests; failing here is a build defect, not a user error.
    if (!parsed) throw std::logic_error("built-in data/reward_health.yaml: " + parsed.error().message);
    return parsed.value();
  }();
  return thresholds;
}

}  // namespace rldk
