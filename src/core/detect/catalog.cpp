// The detector catalog: data/detectors/*.yaml parsed into DetectorSpec, validated against the kinds' parameter
// lists so a typo in a parameter name is an error with its file:line, not a silently ignored default.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>

#include "detect/kinds.h"
#include "io/lenient_json.h"
#include "model/embedded_data.h"
#include "rldk/metric_dictionary.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

const std::set<std::string> DETECTOR_KEYS = {"id",     "fault",     "area",  "severity",    "kind",  "title",
                                             "metric", "inputs",    "params", "explanation", "fixes", "test",
                                             "when",   "direction", "transform", "other_direction", "bound", "onset",
                                             "context", "compare", "eased_by", "progress", "levels", "warmup_level", "beyond_start", "live",
                                             "contradicted_when"};
const std::set<std::string> AREAS = {"kl",   "entropy",   "reward",    "gradients", "advantages", "ratio",
                                     "loss", "optimizer", "throughput", "data",      "numerics"};

std::string where(const std::string& origin, const YAML::Node& node) {
  YAML::Mark mark = node.Mark();
  if (mark.is_null()) return origin;
  return origin + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Error catalog_error(const std::string& origin, const YAML::Node& node, const std::string& message) {
  return Error{ErrorCode::invalid_argument, message, where(origin, node)};
}

bool parse_value(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) return false;
  std::string text = node.as<std::string>();
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == ".nan" || lower == "nan") return out = std::nan(""), true;
  if (lower == ".inf" || lower == "inf" || lower == "+inf") return out = INFINITY, true;
  if (lower == "-.inf" || lower == "-inf") return out = -INFINITY, true;
  return io::parse_number(text, out);
}

// Deterministic normal noise for generated test signals (splitmix64 + Box-Muller): the same on every platform,
// unlike std::normal_distribution, whose algorithm the standard leaves to the library.
class TestNoise {
 public:
  explicit TestNoise(uint64_t seed) : state_(seed) {}
  double normal() {
    double u1 = (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

// A test signal: a list of numbers, or {seed: N, segments: [{n, level, to, noise}, ...]} where each segment has n
// points ramping linearly from `level` to `to` (default: level) plus normal noise of standard deviation `noise`.
Status parse_signal(const std::string& origin, const YAML::Node& node, std::vector<double>& out) {
  if (node.IsSequence()) {
    for (const auto& v : node) {
      double x = 0;
      if (!parse_value(v, x)) return catalog_error(origin, v, "test values must be numbers");
      out.push_back(x);
    }
    return Ok{};
  }
  if (!node.IsMap() || !node["segments"] || !node["segments"].IsSequence()) {
    return catalog_error(origin, node, "a test signal is a list of numbers or {seed: N, segments: [{n, level, to, noise}]}");
  }
  TestNoise noise(node["seed"] ? node["seed"].as<uint64_t>() : 1);
  for (const auto& seg : node["segments"]) {
    double n = 0, level = 0, to = NAN, sigma = 0;
    if (!seg["n"] || !parse_value(seg["n"], n) || n < 1 || !seg["level"] || !parse_value(seg["level"], level)) {
      return catalog_error(origin, seg, "a segment needs n >= 1 and level");
    }
    if (seg["to"] && !parse_value(seg["to"], to)) return catalog_error(origin, seg["to"], "'to' must be a number");
    if (seg["noise"] && !parse_value(seg["noise"], sigma)) {
      return catalog_error(origin, seg["noise"], "'noise' must be a number");
    }
    if (std::isnan(to)) to = level;
    auto count = static_cast<int64_t>(n);
    for (int64_t i = 0; i < count; ++i) {
      double t = count > 1 ? static_cast<double>(i) / static_cast<double>(count - 1) : 0.0;
      out.push_back(level + (to - level) * t + (sigma > 0 ? sigma * noise.normal() : 0.0));
    }
  }
  return Ok{};
}

Result<std::vector<std::string>> string_list(const std::string& origin, const YAML::Node& node, const char* what) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(node.as<std::string>());
  } else if (node.IsSequence()) {
    for (const auto& v : node) {
      if (!v.IsScalar()) return catalog_error(origin, v, std::string(what) + " entries must be strings");
      out.push_back(v.as<std::string>());
    }
  } else {
    return catalog_error(origin, node, std::string(what) + " must be a string or a list of strings");
  }
  return out;
}

Result<ThresholdCondition> parse_condition(const std::string& origin, const YAML::Node& node,
                                           const DetectorSpec& spec) {
  ThresholdCondition c;
  if (!node.IsMap() || !node["input"]) return catalog_error(origin, node, "a condition needs 'input'");
  c.input = node["input"].as<std::string>();
  auto has_role = [&](const std::string& role) {
    return std::any_of(spec.inputs.begin(), spec.inputs.end(), [&](const auto& in) { return in.first == role; });
  };
  if (!has_role(c.input)) return catalog_error(origin, node["input"], "no input named '" + c.input + "'");
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (key == "input") continue;
    if (key == "divide_by" || key == "multiply_by") {
      std::string& role = key == "divide_by" ? c.divide_by : c.multiply_by;
      role = kv.second.as<std::string>();
      if (!has_role(role)) return catalog_error(origin, kv.second, "no input named '" + role + "'");
    } else if (key == "absolute") {
      c.absolute = kv.second.as<bool>();
    } else if (key == "above" || key == "below") {
      double v = 0;
      if (!parse_value(kv.second, v)) return catalog_error(origin, kv.second, key + " must be a number");
      (key == "above" ? c.above : c.below) = v;
      (key == "above" ? c.has_above : c.has_below) = true;
    } else {
      return catalog_error(origin, kv.first, "unknown condition field '" + key +
                                                  "' (input, divide_by, multiply_by, absolute, above, below)");
    }
  }
  if (!c.has_above && !c.has_below) return catalog_error(origin, node, "a condition needs 'above' or 'below'");
  return c;
}

Result<DetectorSpec> parse_detector(const std::string& origin, const YAML::Node& node) {
  DetectorSpec d;
  d.origin = where(origin, node);
  if (!node.IsMap()) return catalog_error(origin, node, "each detector must be a mapping");
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!DETECTOR_KEYS.count(key)) return catalog_error(origin, kv.first, "unknown detector field '" + key + "'");
  }
  for (const char* key : {"id", "fault", "area", "severity", "kind", "title", "explanation"}) {
    if (!node[key] || !node[key].IsScalar()) return catalog_error(origin, node, std::string("detector needs '") + key + "'");
  }
  d.id = node["id"].as<std::string>();
  d.fault = node["fault"].as<std::string>();
  d.area = node["area"].as<std::string>();
  d.kind = node["kind"].as<std::string>();
  d.title = node["title"].as<std::string>();
  d.explanation = node["explanation"].as<std::string>();
  const auto& faults = fault_types();
  if (std::find(faults.begin(), faults.end(), d.fault) == faults.end()) {
    return catalog_error(origin, node["fault"], "unknown fault type '" + d.fault + "'");
  }
  if (!AREAS.count(d.area)) return catalog_error(origin, node["area"], "unknown area '" + d.area + "'");
  if (!parse_severity(node["severity"].as<std::string>(), d.severity)) {
    return catalog_error(origin, node["severity"], "severity must be info, warning or critical");
  }
  const auto* params = detect::kind_parameters(d.kind);
  if (params == nullptr) return catalog_error(origin, node["kind"], "unknown detector kind '" + d.kind + "'");

  const MetricDictionary& dict = MetricDictionary::builtin();
  if (node["metric"]) {
    auto names = string_list(origin, node["metric"], "metric");
    if (!names.ok()) return names.error();
    d.inputs.emplace_back("value", std::move(names).value());
  }
  // `inputs:` roles are required; `context:` roles come after them and are read when the run logs them.
  for (const char* key : {"inputs", "context"}) {
    if (std::string_view(key) == "context") d.required_inputs = d.inputs.size();
    YAML::Node roles = node[key];
    if (!roles) continue;
    if (!roles.IsMap()) return catalog_error(origin, roles, std::string(key) + " must map a role to metric names");
    for (const auto& kv : roles) {
      auto names = string_list(origin, kv.second, key);
      if (!names.ok()) return names.error();
      d.inputs.emplace_back(kv.first.as<std::string>(), std::move(names).value());
    }
  }
  for (auto& [role, names] : d.inputs) {
    for (auto& n : names) {
      // A run setting stands in for a metric the run does not log (setting.max_completion_length for the length cap):
      // a constant input from the run's meta (data/metrics.yaml `settings`).
      if (n.starts_with(SETTING_META_PREFIX)) {
        std::string setting = n.substr(SETTING_META_PREFIX.size());
        const auto& settings = dict.settings();
        if (std::none_of(settings.begin(), settings.end(), [&](const SettingInfo& s) { return s.name == setting; })) {
          return catalog_error(origin, node, "input " + role + ": unknown setting '" + setting + "' (data/metrics.yaml settings)");
        }
        continue;
      }
      n = dict.canonical_name(n);
    }
  }
  if (d.inputs.empty()) return catalog_error(origin, node, "detector needs 'metric' or 'inputs'");
  for (const auto& n : d.inputs.front().second) {
    if (n.starts_with(SETTING_META_PREFIX)) return catalog_error(origin, node, "the first input drives the detector: it must be a metric, not a setting");
  }
  size_t needed =
      d.kind == "controller" || d.kind == "co_trend" || d.kind == "zero_variance_groups" || d.kind == "stall" ? 2 : 1;
  if (!detect::judged_over_metrics(d.kind) && d.required_inputs < needed) {
    return catalog_error(origin, node, "kind " + d.kind + " needs " + std::to_string(needed) + " inputs");
  }

  YAML::Node p = node["params"];
  if (p && !p.IsMap()) return catalog_error(origin, p, "params must be a mapping");
  if (p) {
    for (const auto& kv : p) {
      std::string key = kv.first.as<std::string>();
      if (std::find(params->begin(), params->end(), key) == params->end()) {
        std::string known;
        for (const auto& k : *params) known += (known.empty() ? "" : ", ") + k;
        return catalog_error(origin, kv.first, "kind " + d.kind + " has no parameter '" + key + "' (it has: " + known + ")");
      }
      double v = 0;
      if (!parse_value(kv.second, v)) return catalog_error(origin, kv.second, "parameter " + key + " must be a number");
      d.params[key] = v;
    }
  }
  for (const auto& k : *params) {
    if (!d.params.count(k)) return catalog_error(origin, node, "kind " + d.kind + " needs parameter '" + k + "'");
  }
  for (const auto& opt : detect::kind_options(d.kind)) {
    std::string value = opt.allowed.front();
    if (node[opt.name]) value = node[opt.name].as<std::string>();
    if (std::find(opt.allowed.begin(), opt.allowed.end(), value) == opt.allowed.end()) {
      return catalog_error(origin, node[opt.name], opt.name + " must be one of the allowed words, got '" + value + "'");
    }
    d.options[opt.name] = value;
  }
  if (d.option("progress", "eases") == "required") {
    // The bound is the fault only once its progress metric moved: without a required `progress` input and a
    // progress_min_sigma > 0 it could never fire, and a run that does not log the metric must list it as skipped.
    bool required_progress = false;
    for (size_t r = 1; r < d.required_inputs; ++r) {
      required_progress = required_progress || d.inputs[r].first == "progress";
    }
    if (!required_progress || !(d.param("progress_min_sigma", 0) > 0)) {
      return catalog_error(origin, node["progress"],
                           "progress: required needs a `progress` role under inputs: and progress_min_sigma > 0");
    }
  }
  if (YAML::Node levels = node["levels"]) {
    bool warning = levels.IsMap() && levels["warning"] && parse_value(levels["warning"], d.level_warning);
    bool critical = !levels.IsMap() || !levels["critical"] || parse_value(levels["critical"], d.level_critical);
    if (!warning || !critical) {
      return catalog_error(origin, levels,
                           "levels must be {warning: <number>} or {warning: <number>, critical: <number>}");
    }
  }
  if (d.kind == "bound" && std::isnan(d.level_warning)) {
    // The levels live with the metric (data/metrics.yaml `healthy`): a bound detector on a metric without that
    // side of a healthy range could never fire.
    for (const auto& name : d.inputs.front().second) {
      const MetricInfo* info = dict.find(name);
      const HealthyRange::Side* side = info ? info->healthy.side(d.options["bound"]) : nullptr;
      if (side == nullptr || !side->set()) {
        return catalog_error(origin, node["metric"], "metric " + name + " has no healthy range '" +
                                                         d.options["bound"] + "' in data/metrics.yaml");
      }
    }
  }
  if (YAML::Node when = node["when"]) {
    if (!when.IsSequence()) return catalog_error(origin, when, "when must be a list of conditions");
    for (const auto& c : when) {
      auto cond = parse_condition(origin, c, d);
      if (!cond.ok()) return cond.error();
      d.conditions.push_back(std::move(cond).value());
    }
  }
  if (YAML::Node contradicted = node["contradicted_when"]) {
    if (d.kind != "bound") return catalog_error(origin, contradicted, "contradicted_when is for the bound kind");
    if (!contradicted.IsSequence()) return catalog_error(origin, contradicted, "contradicted_when must be a list of conditions");
    for (const auto& c : contradicted) {
      auto cond = parse_condition(origin, c, d);
      if (!cond.ok()) return cond.error();
      d.contradictions.push_back(std::move(cond).value());
    }
  }
  if (YAML::Node eased = node["eased_by"]) {
    // A training setting that pushes for this change on purpose (data/metrics.yaml `settings`).
    if (!eased.IsMap() || !eased["setting"] || !eased["note"]) {
      return catalog_error(origin, eased, "eased_by needs {setting: <a setting in data/metrics.yaml>, note: <text>}");
    }
    d.eased_by_setting = eased["setting"].as<std::string>();
    d.eased_by_note = eased["note"].as<std::string>();
    const auto& settings = dict.settings();
    auto named = [&](const SettingInfo& s) { return s.name == d.eased_by_setting; };
    if (std::none_of(settings.begin(), settings.end(), named)) {
      return catalog_error(origin, eased["setting"],
                           "unknown setting '" + d.eased_by_setting + "' (data/metrics.yaml settings)");
    }
  }
  if (d.kind == "threshold" && d.conditions.empty()) return catalog_error(origin, node, "threshold needs 'when'");
  if (YAML::Node fixes = node["fixes"]) {
    auto list = string_list(origin, fixes, "fixes");
    if (!list.ok()) return list.error();
    d.fixes = std::move(list).value();
  }
  if (d.fixes.empty()) return catalog_error(origin, node, "detector needs at least one fix");
  YAML::Node test = node["test"];
  if (!test || !test["fires"] || !test["quiet"]) {
    return catalog_error(origin, node, "detector needs test: {fires: ..., quiet: ...} (values that fire and values that do not)");
  }
  for (auto [key, target] : {std::pair{"fires", &d.test_fires}, std::pair{"quiet", &d.test_quiet}}) {
    for (const auto& series : test[key]) {
      auto& values = (*target)[dict.canonical_name(series.first.as<std::string>())];
      auto st = parse_signal(origin, series.second, values);
      if (!st.ok()) return st.error();
    }
  }
  return d;
}

}  // namespace

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
  }
  return "warning";
}

bool parse_severity(const std::string& name, Severity& severity) {
  if (name == "info") return severity = Severity::info, true;
  if (name == "warning") return severity = Severity::warning, true;
  if (name == "critical") return severity = Severity::critical, true;
  return false;
}

double DetectorSpec::param(const std::string& name, double fallback) const {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

std::string DetectorSpec::option(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

const DetectorSpec* DetectorCatalog::find(const std::string& id) const {
  for (const auto& d : detectors) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

const std::vector<std::string>& fault_types() {
  static const std::vector<std::string> types = {
      "kl_spike",           "kl_level_shift",     "kl_controller_off_target", "kl_drift",       "entropy_collapse",
      "entropy_surge",      "reward_hacking_length", "reward_hacking_gold",   "reward_saturation", "grad_explosion",
      "grad_vanishing",     "grad_spike",         "grad_imbalance",           "advantage_bias", "advantage_collapse",
      "clip_fraction_high", "ratio_breach",       "grpo_zero_variance",       "truncation",     "non_finite",
      "loss_plateau",       "lr_anomaly",         "memory_leak",              "throughput_drop", "logprob_mismatch",
      "kl_above_range",     "length_collapse",    "length_growth",            "reward_collapse", "entropy_rise",
      "loss_divergence",    "reward_never_paid", "eos_mismatch"};
  return types;
}

Result<DetectorCatalog> parse_detector_catalog(const std::string& yaml_text, const std::string& origin) {
  DetectorCatalog catalog;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    YAML::Node list = root["detectors"];
    if (!list || !list.IsSequence()) return catalog_error(origin, root, "expected a top-level 'detectors:' list");
    for (const auto& node : list) {
      auto d = parse_detector(origin, node);
      if (!d.ok()) return d.error();
      if (catalog.find(d->id)) return catalog_error(origin, node["id"], "duplicate detector id '" + d->id + "'");
      catalog.detectors.push_back(std::move(d).value());
    }
  } catch (const YAML::Exception& e) {
    return Error{ErrorCode::invalid_argument, e.msg,
                 origin + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1)};
  }
  return catalog;
}

const DetectorCatalog& builtin_detector_catalog() {
  static const DetectorCatalog catalog = [] {
    DetectorCatalog all;
    for (const auto& file : embedded_files()) {
      std::string path(file.path);
      if (path.rfind("detectors/", 0) != 0 || path.size() < 5 || path.substr(path.size() - 5) != ".yaml") continue;
      auto parsed = parse_detector_catalog(std::string(file.text), "data/" + path);
      // The built-in catalog is checked by the unit tests; a broken file here is a build defect, not user input.
      if (!parsed.ok()) throw std::runtime_error("built-in detector catalog: " + to_string(parsed.error()));
      for (auto& d : parsed->detectors) all.detectors.push_back(std::move(d));
    }
    return all;
  }();
  return catalog;
}

}  // namespace rldk
