// Rule files (YAML). The grammar is the older rldk's, so existing files keep working:
//   rules:
//     - id: kl_spike
//       metric: policy/kl              # or metrics: [...]; or a legacy `where:` filter on the name
//       condition: value > 0.35
//       window: {size: 5, kind: consecutive}
//       grace_steps: 5
//       cooldown_steps: 5
//       actions: [warn, {stop: {msg: "KL {value:.3f} at step {step}"}}]
// Every problem is reported as path:line:column with what was expected.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "detect/kinds.h"
#include "io/lenient_json.h"
#include "model/embedded_data.h"
#include "rldk/json.h"
#include "rldk/metric_dictionary.h"
#include "rldk/rules.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

const std::set<std::string> RULE_KEYS = {"id", "description", "metric", "metrics", "where", "condition", "window",
                                         "grace_steps", "cooldown_steps", "actions", "test", "detector"};
// Fewer warm-up values leave no spread to learn a change detector's scale from.
constexpr int MIN_DETECTOR_WARMUP = 3;
const std::set<std::string> ACTION_KINDS = {"warn", "stop", "sentinel", "http", "webhook", "shell"};

std::string where(const std::string& origin, const YAML::Mark& mark, int extra_columns = 0) {
  if (mark.is_null()) return origin;
  return origin + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1 + extra_columns);
}

Error rule_error(const std::string& origin, const YAML::Node& node, const std::string& message) {
  return Error{ErrorCode::invalid_argument, message, where(origin, node.Mark())};
}

// Expression errors carry "column N" within the expression; point at the same character in the file when the
// expression is a one-line scalar.
Error expression_error(const std::string& origin, const YAML::Node& node, const std::string& field,
                       const Error& error) {
  int column = 0;
  auto at = error.context.find("column ");
  if (at != std::string::npos) column = std::atoi(error.context.c_str() + at + 7) - 1;
  std::string text = node.as<std::string>();
  bool quoted = node.Tag() == "!";  // yaml-cpp marks quoted scalars with the "!" tag
  bool one_line = text.find('\n') == std::string::npos;
  int offset = one_line ? column + (quoted ? 1 : 0) : 0;
  return Error{ErrorCode::invalid_argument, "in " + field + " '" + text + "': " + error.message,
               where(origin, node.Mark(), offset)};
}

Result<int64_t> non_negative(const std::string& origin, const YAML::Node& node, const std::string& field) {
  try {
    auto v = node.as<int64_t>();
    if (v < 0) return rule_error(origin, node, field + " must be >= 0, got " + std::to_string(v));
    return v;
  } catch (const YAML::Exception&) {
    return rule_error(origin, node, field + " must be a whole number, got '" + node.as<std::string>("?") + "'");
  }
}

Result<RuleAction> parse_action(const std::string& origin, const YAML::Node& node) {
  RuleAction action;
  YAML::Node settings;
  if (node.IsScalar()) {
    action.kind = node.as<std::string>();
  } else if (node.IsMap() && node.size() == 1) {
    action.kind = node.begin()->first.as<std::string>();
    settings = node.begin()->second;
  } else {
    return rule_error(origin, node, "an action is a name (warn) or a one-key mapping ({stop: {msg: ...}})");
  }
  if (!ACTION_KINDS.count(action.kind)) {
    return rule_error(origin, node, "unknown action '" + action.kind +
                                        "' (expected warn, stop, sentinel, http, webhook or shell)");
  }
  if (action.kind == "webhook") action.kind = "http";
  if (settings && !settings.IsNull()) {
    if (!settings.IsMap()) return rule_error(origin, settings, "settings of action '" + action.kind + "' must be a mapping");
    for (const auto& kv : settings) {
      std::string key = kv.first.as<std::string>();
      if (key == "headers" && kv.second.IsMap()) {
        for (const auto& h : kv.second) action.headers[h.first.as<std::string>()] = h.second.as<std::string>();
      } else if (kv.second.IsScalar()) {
        action.params[key == "message" ? "msg" : key] = kv.second.as<std::string>();
      } else if (key == "cmd" && kv.second.IsSequence()) {
        std::string joined;  // an argv list; shell-quoted so /bin/sh sees the same words
        for (const auto& word : kv.second) {
          std::string w = word.as<std::string>();
          std::string quoted = "'";
          for (char c : w) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
          joined += (joined.empty() ? "" : " ") + quoted + "'";
        }
        action.params["cmd"] = joined;
      } else {
        return rule_error(origin, kv.second, "setting '" + key + "' of action '" + action.kind + "' must be a scalar");
      }
    }
  }
  if (action.kind == "sentinel" && !action.params.count("path")) {
    return rule_error(origin, node, "a sentinel action needs a path");
  }
  if (action.kind == "http" && !action.params.count("url")) return rule_error(origin, node, "an http action needs a url");
  if (action.kind == "shell" && !action.params.count("cmd")) return rule_error(origin, node, "a shell action needs a cmd");
  return action;
}

// A scan catalog detector by id: one the rule engine can drive (the non_finite kind is the scan driver's own).
Result<ChangeDetector> catalog_detector(const std::string& origin, const YAML::Node& node, const std::string& id) {
  const DetectorSpec* spec = builtin_detector_catalog().find(id);
  if (spec == nullptr) {
    return rule_error(origin, node, "unknown detector '" + id + "': give a detector id of `rldk scan` (docs/detectors.md)"
                                    " or {kind: cusum | page_hinkley, ...}");
  }
  if (spec->kind == "non_finite") {
    return rule_error(origin, node, "detector '" + id + "' runs over all metrics in the scan; in a rule write "
                                    "condition: not isfinite(value)");
  }
  if (detect::judged_over_metrics(spec->kind)) {
    return rule_error(origin, node, "detector '" + id + "' judges the whole run once it has ended; `rldk scan` "
                                    "reports it, a live rule cannot");
  }
  ChangeDetector det;
  det.catalog_id = id;
  det.kind = spec->kind;
  return det;
}

// detector: ID | {id: ID} (a scan catalog detector, with the catalog's parameters) | {kind: cusum | page_hinkley, ...}.
Result<ChangeDetector> parse_detector(const std::string& origin, const YAML::Node& d) {
  if (d.IsScalar()) return catalog_detector(origin, d, d.as<std::string>());
  if (d.IsMap() && d["id"]) {
    for (const auto& kv : d) {
      if (kv.first.as<std::string>() != "id") {
        return rule_error(origin, kv.first, "a catalog detector takes only its id: it runs with the scan's parameters "
                                            "(data/detectors)");
      }
    }
    return catalog_detector(origin, d["id"], d["id"].as<std::string>());
  }
  if (!d.IsMap() || !d["kind"]) {
    return rule_error(origin, d, "detector needs a catalog detector id (e.g. entropy_below_start) or a kind: cusum or "
                                 "page_hinkley");
  }
  ChangeDetector det;
  det.kind = d["kind"].as<std::string>();
  if (det.kind != "cusum" && det.kind != "page_hinkley") {
    return rule_error(origin, d["kind"], "detector kind must be cusum or page_hinkley, got '" + det.kind +
                                             "' (a scan detector is named by its id: detector: {id: ...})");
  }
  for (const auto& kv : d) {
    std::string key = kv.first.as<std::string>();
    if (key == "kind") continue;
    if (key == "direction") {
      det.direction = kv.second.as<std::string>();
      if (det.direction != "up" && det.direction != "down" && det.direction != "both") {
        return rule_error(origin, kv.second, "direction must be up, down or both");
      }
      continue;
    }
    double v = 0;
    if (!kv.second.IsScalar() || !io::parse_number(kv.second.as<std::string>(), v) || !(v > 0) || !std::isfinite(v)) {
      return rule_error(origin, kv.second, "detector setting '" + key + "' must be a positive number");
    }
    if (key == "warmup") det.warmup = static_cast<int>(v);
    else if (key == "k") det.k = v;
    else if (key == "h") det.h = v;
    else if (key == "delta") det.delta = v;
    else if (key == "threshold") det.threshold = v;
    else if (key == "alpha" && v <= 1) det.alpha = v;
    else return rule_error(origin, kv.first, "unknown detector setting '" + key + "' (warmup, k, h, delta, threshold, alpha, direction)");
  }
  if (det.warmup < MIN_DETECTOR_WARMUP) {
    return rule_error(origin, d, "detector warmup must be at least " + std::to_string(MIN_DETECTOR_WARMUP) + " values");
  }
  return det;
}

Result<Rule> parse_rule(const std::string& origin, const YAML::Node& node, std::vector<std::string>& warnings) {
  if (!node.IsMap()) return rule_error(origin, node, "a rule is a mapping with at least id and condition");
  Rule rule;
  rule.origin = where(origin, node.Mark());
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!RULE_KEYS.count(key)) warnings.push_back(where(origin, kv.first.Mark()) + ": unknown rule field '" + key + "' ignored");
  }
  if (!node["id"] || !node["id"].IsScalar() || node["id"].as<std::string>().empty()) {
    return rule_error(origin, node, "rule has no id");
  }
  rule.id = node["id"].as<std::string>();
  if (node["description"]) rule.description = node["description"].as<std::string>();
  const auto& dict = MetricDictionary::builtin();
  for (const char* key : {"metric", "metrics"}) {
    YAML::Node m = node[key];
    if (!m) continue;
    if (m.IsScalar()) rule.metrics.push_back(dict.canonical_name(m.as<std::string>()));
    else if (m.IsSequence()) for (const auto& item : m) rule.metrics.push_back(dict.canonical_name(item.as<std::string>()));
    else return rule_error(origin, m, std::string(key) + " must be a metric name or a list of them");
  }
  if (node["where"]) {
    rule.where_text = node["where"].as<std::string>();
    auto parsed = Expression::parse(rule.where_text);
    if (!parsed.ok()) return expression_error(origin, node["where"], "where", parsed.error());
    rule.where = std::make_shared<const Expression>(std::move(parsed).value());
  }
  if (YAML::Node d = node["detector"]) {
    auto detector = parse_detector(origin, d);
    if (!detector.ok()) return detector.error();
    rule.detector = std::move(detector).value();
    // A rule that names a catalog detector and no metric watches what the scan would: the detector's first input.
    if (rule.metrics.empty() && !rule.where && !rule.detector->catalog_id.empty()) {
      const DetectorSpec* spec = builtin_detector_catalog().find(rule.detector->catalog_id);
      rule.metrics = spec->inputs.front().second;
      rule.detector->watches_catalog_candidates = true;
    }
  }
  if (rule.metrics.empty() && !rule.where) {
    return rule_error(origin, node, "rule '" + rule.id + "' watches nothing: give metric: NAME (or a where: filter)");
  }
  if (!rule.detector && (!node["condition"] || !node["condition"].IsScalar())) {
    return rule_error(origin, node, "rule '" + rule.id + "' has no condition (or detector)");
  }
  if (node["condition"]) {
    rule.condition_text = node["condition"].as<std::string>();
    auto condition = Expression::parse(rule.condition_text);
    if (!condition.ok()) return expression_error(origin, node["condition"], "condition", condition.error());
    rule.condition = std::make_shared<const Expression>(std::move(condition).value());
  }
  if (YAML::Node w = node["window"]) {
    YAML::Node size = w.IsMap() ? w["size"] : w;
    if (size) {
      auto n = non_negative(origin, size, "window size");
      if (!n.ok()) return n.error();
      if (n.value() < 1 || n.value() > 100000) return rule_error(origin, size, "window size must be between 1 and 100000");
      rule.window_size = static_cast<int>(n.value());
    }
    if (w.IsMap() && w["kind"]) {
      std::string kind = w["kind"].as<std::string>();
      if (kind == "consecutive") rule.window_kind = WindowKind::consecutive;
      else if (kind == "rolling") rule.window_kind = WindowKind::rolling;
      else return rule_error(origin, w["kind"], "window kind must be consecutive or rolling, got '" + kind + "'");
    }
    if (w.IsMap()) {
      for (const auto& kv : w) {
        std::string k = kv.first.as<std::string>();
        if (k != "size" && k != "kind") {
          warnings.push_back(where(origin, kv.first.Mark()) + ": window field '" + k +
                             "' ignored (write the aggregation in the condition, e.g. mean(value) < 0.1)");
        }
      }
    }
  }
  for (auto [field, target] : {std::pair{"grace_steps", &rule.grace_steps}, std::pair{"cooldown_steps", &rule.cooldown_steps}}) {
    if (!node[field]) continue;
    auto v = non_negative(origin, node[field], field);
    if (!v.ok()) return v.error();
    *target = v.value();
  }
  if (YAML::Node actions = node["actions"]) {
    if (!actions.IsSequence()) return rule_error(origin, actions, "actions must be a list");
    for (const auto& a : actions) {
      auto action = parse_action(origin, a);
      if (!action.ok()) return action.error();
      rule.actions.push_back(std::move(action).value());
    }
  }
  if (rule.actions.empty()) rule.actions.push_back(RuleAction{"warn", {}, {}});
  if (YAML::Node test = node["test"]) {
    for (auto [key, target] : {std::pair{"fires", &rule.test_fires}, std::pair{"quiet", &rule.test_quiet}}) {
      if (!test[key]) continue;
      for (const auto& series : test[key]) {
        auto& values = (*target)[dict.canonical_name(series.first.as<std::string>())];
        for (const auto& v : series.second) {
          double number = 0;
          if (!io::parse_number(v.as<std::string>(), number)) {
            return rule_error(origin, v, "test values must be numbers, got '" + v.as<std::string>() + "'");
          }
          values.push_back(number);
        }
      }
    }
  }
  return rule;
}

}  // namespace

bool Rule::stops() const {
  return std::any_of(actions.begin(), actions.end(), [](const RuleAction& a) { return a.kind == "stop"; });
}

const Rule* RuleSet::find(const std::string& id) const {
  for (const auto& r : rules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Result<RuleSet> parse_rules(const std::string& yaml_text, const std::string& origin) {
  RuleSet set;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    YAML::Node list = root.IsMap() ? root["rules"] : root;
    if (!list || !list.IsSequence()) {
      return Error{ErrorCode::invalid_argument, "expected a list of rules under 'rules:'", where(origin, root.Mark())};
    }
    std::set<std::string> ids;
    for (const auto& node : list) {
      auto rule = parse_rule(origin, node, set.warnings);
      if (!rule.ok()) return rule.error();
      if (!ids.insert(rule->id).second) return rule_error(origin, node, "duplicate rule id '" + rule->id + "'");
      set.rules.push_back(std::move(rule).value());
    }
  } catch (const YAML::Exception& e) {
    return Error{ErrorCode::invalid_argument, "invalid YAML: " + e.msg, where(origin, e.mark)};
  }
  return set;
}

Result<RuleSet> load_rules_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorCode::not_found, "cannot read rules file", path};
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_rules(buffer.str(), path);
}

// The `scan` preset is built from the detector catalog rather than written out, so it always holds exactly the
// scan's detectors: every one that reports a warning or worse, each as a warn rule `scan_ID` with the scan's own
// code and parameters. non_finite runs over every metric in the scan; its rule is the condition form (once per
// metric). The preset never stops a trainer: the stop-level guards are the other presets' absolute bounds.
constexpr const char* SCAN_PRESET = "scan";
constexpr std::string_view SCAN_RULE_PREFIX = "scan_";  // scan_ID: the rule for detector ID

std::string scan_preset_text() {
  std::string text = "rules:\n";
  for (const DetectorSpec& d : builtin_detector_catalog().detectors) {
    if (d.severity == Severity::info) continue;
    text += "  - id: " + std::string(SCAN_RULE_PREFIX) + d.id + "\n    description: " + Json(d.title + " (the scan's " + d.id + ", live).").dump(-1);
    if (d.kind == "non_finite") {
      text += "\n    where: not isfinite(value)\n    condition: not isfinite(value)\n    cooldown_steps: 100";
    } else {
      text += "\n    detector: " + d.id;
    }
    // The alert says what the detector found, in the scan's words, not only the value it confirmed it at.
    std::string msg = d.title + ": {metric} = {value:.4g} at step {step} (the scan's " + d.id + ", live)";
    text += "\n    actions: [{warn: {msg: " + Json(msg).dump(-1) + "}}]\n";
  }
  return text;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names{SCAN_PRESET};
  for (const auto& f : embedded_files()) {
    std::string_view p = f.path;
    if (p.substr(0, 8) == "presets/" && p.size() > 13 && p.substr(p.size() - 5) == ".yaml") {
      names.emplace_back(p.substr(8, p.size() - 13));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<RuleSet> load_preset(const std::string& name) {
  if (name == SCAN_PRESET) {
    auto rules = parse_rules(scan_preset_text(), "preset scan");
    // Each rule is tested on its detector's own catalog test: live, it fires on the values that make the scan
    // report and stays quiet on the values that must leave the scan quiet.
    if (rules.ok()) {
      for (Rule& r : rules->rules) {
        const DetectorSpec* spec = builtin_detector_catalog().find(r.id.substr(SCAN_RULE_PREFIX.size()));
        r.test_fires = spec->test_fires;
        r.test_quiet = spec->test_quiet;
      }
    }
    return rules;
  }
  std::string_view text = embedded_file("presets/" + name + ".yaml");
  if (text.empty()) {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    return Error{ErrorCode::invalid_argument, "unknown preset '" + name + "' (known: " + known + ")", ""};
  }
  return parse_rules(std::string(text), "preset " + name);
}

namespace {

// A rule of the generated `scan` preset (origin "preset scan:LINE:COLUMN").
bool from_scan_preset(const Rule& rule) { return rule.origin.rfind(std::string("preset ") + SCAN_PRESET + ":", 0) == 0; }

// Two rules that let the same catalog detector decide alone: one alarm, written twice.
bool same_detector_alone(const Rule& a, const Rule& b) {
  return a.detector && b.detector && !a.detector->catalog_id.empty() &&
         a.detector->catalog_id == b.detector->catalog_id && !a.condition && !b.condition;
}

}  // namespace

Status merge_rule_sets(RuleSet& into, RuleSet more) {
  for (auto& rule : more.rules) {
    // A guard preset that runs one of the scan's detectors (grpo_safe_entropy_below_start) and `--preset scan`
    // together would warn twice for one event: the guard's rule stays, the scan preset's copy goes.
    if (from_scan_preset(rule) && std::any_of(into.rules.begin(), into.rules.end(), [&](const Rule& r) {
          return same_detector_alone(r, rule);
        })) {
      continue;
    }
    if (!from_scan_preset(rule)) {
      into.rules.erase(std::remove_if(into.rules.begin(), into.rules.end(),
                                      [&](const Rule& r) { return from_scan_preset(r) && same_detector_alone(r, rule); }),
                       into.rules.end());
    }
    if (into.find(rule.id)) {
      return Error{ErrorCode::invalid_argument, "rule id '" + rule.id + "' is defined twice", rule.origin};
    }
    into.rules.push_back(std::move(rule));
  }
  for (auto& w : more.warnings) into.warnings.push_back(std::move(w));
  return Ok{};
}

Status apply_override(RuleSet& rules, const std::string& assignment) {
  auto eq = assignment.find('=');
  auto dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq) {
    return Error{ErrorCode::invalid_argument, "expected RULE_ID.FIELD=VALUE, got '" + assignment + "'", "--set-rule"};
  }
  std::string id = assignment.substr(0, dot);
  std::string field = assignment.substr(dot + 1, eq - dot - 1);
  std::string value = assignment.substr(eq + 1);
  auto it = std::find_if(rules.rules.begin(), rules.rules.end(), [&](const Rule& r) { return r.id == id; });
  if (it == rules.rules.end()) return Error{ErrorCode::invalid_argument, "no rule with id '" + id + "'", "--set-rule"};
  Rule& rule = *it;
  auto number = [&](int64_t lo, int64_t hi) -> Result<int64_t> {
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < lo || v > hi) {
      return Error{ErrorCode::invalid_argument, field + " must be a whole number in [" + std::to_string(lo) + ", " +
                                                    std::to_string(hi) + "], got '" + value + "'", "--set-rule"};
    }
    return static_cast<int64_t>(v);
  };
  if (field == "condition" || field == "where") {
    auto parsed = Expression::parse(value);
    if (!parsed.ok()) {
      return Error{ErrorCode::invalid_argument, parsed.error().context + ": " + parsed.error().message, "--set-rule " + assignment};
    }
    auto expr = std::make_shared<const Expression>(std::move(parsed).value());
    if (field == "condition") {
      rule.condition = expr;
      rule.condition_text = value;
    } else {
      rule.where = expr;
      rule.where_text = value;
    }
  } else if (field == "window.size" || field == "window") {
    auto n = number(1, 100000);
    if (!n.ok()) return n.error();
    rule.window_size = static_cast<int>(n.value());
  } else if (field == "window.kind") {
    if (value != "consecutive" && value != "rolling") {
      return Error{ErrorCode::invalid_argument, "window.kind must be consecutive or rolling", "--set-rule"};
    }
    rule.window_kind = value == "rolling" ? WindowKind::rolling : WindowKind::consecutive;
  } else if (field == "grace_steps" || field == "cooldown_steps") {
    auto n = number(0, int64_t{1} << 53);
    if (!n.ok()) return n.error();
    (field == "grace_steps" ? rule.grace_steps : rule.cooldown_steps) = n.value();
  } else if (field == "enabled") {
    if (value == "false" || value == "0") rules.rules.erase(it);
    else if (value != "true" && value != "1") return Error{ErrorCode::invalid_argument, "enabled must be true or false", "--set-rule"};
  } else {
    return Error{ErrorCode::invalid_argument,
                 "unknown field '" + field + "' (condition, where, window.size, window.kind, grace_steps, "
                 "cooldown_steps, enabled)", "--set-rule"};
  }
  return Ok{};
}

}  // namespace rldk
