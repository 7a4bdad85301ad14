// Guard rules: what the live monitor (and the in-process Python Monitor) evaluates on every observation.
//
// A rule watches one or more canonical metrics, keeps a window of their most recent values per run, and fires when
// its condition holds (see docs/rules.md for the exact semantics and the rule-file grammar). Rules come from YAML
// files compatible with the older rldk grammar, or from the built-in presets in data/presets/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rldk/expression.h"
#include "rldk/result.h"

namespace rldk {

enum class WindowKind { consecutive, rolling };

// One action a rule takes when it fires. `params` holds the action's own settings as written in the rule file
// (msg, path, url, timeout, ...), already validated by kind.
struct RuleAction {
  std::string kind;  // warn | stop | sentinel | http | shell
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> headers;  // http only
};

// A detector a rule can use instead of (or with) a condition; the rule fires where the detector alarms. Two forms:
//   - a scan catalog detector (data/detectors, docs/detectors.md) named by `catalog_id`: the rule's metric is its
//     first input and it runs with exactly the scan's code and parameters, so the rule fires at the step where that
//     detector confirms an episode (the finding `rldk scan` reports later). `kind` is the catalog kind.
//   - the rule's own change detector (kind cusum | page_hinkley): it fires when the watched metric's level shifts
//     relative to a reference learned over the first `warmup` values (after every restart). Values are standardised
//     with that reference (mean, and 1.4826 x MAD as a robust scale) so thresholds are in standard deviations.
//     Trade-off (two-sided CUSUM, k = 0.5): h = 4 -> about 168 steps between false alarms on in-control noise and a
//     detection delay of 8.4 steps for a 1-sigma shift; h = 5 -> 465 and 10.4; h = 8 -> 9,462 and 16.4
//     (docs/rules.md).
struct ChangeDetector {
  std::string catalog_id;          // a scan catalog detector's id; empty: the rule's own cusum / page_hinkley
  std::string kind = "cusum";      // cusum | page_hinkley, or the catalog detector's kind
  std::string direction = "both";  // up | down | both
  int warmup = 30;                 // values used to learn the reference level and scale
  double k = 0.5;                  // cusum: allowance, half the shift to detect, in standard deviations
  double h = 5.0;                  // cusum: decision threshold
  double delta = 0.5;              // page_hinkley: tolerated drift per value, in standard deviations
  double threshold = 10.0;         // page_hinkley: decision threshold
  double alpha = 0.9999;           // page_hinkley: forgetting factor of the cumulative sum
  // A catalog detector whose rule names no metric watches every candidate of its first input, and the scan's
  // choice among them decides which one judges (the first the run logs); a rule that names its metrics watches
  // exactly those.
  bool watches_catalog_candidates = false;
};

struct Rule {
  std::string id;
  std::string description;
  std::vector<std::string> metrics;          // canonical names watched; empty: every metric `where` accepts
  std::shared_ptr<const Expression> where;   // filter on the observation (name, run_id, tags, meta); may be null
  std::string where_text;
  std::shared_ptr<const Expression> condition;  // null: the detector alone decides
  std::string condition_text;
  std::optional<ChangeDetector> detector;
  int window_size = 1;
  WindowKind window_kind = WindowKind::consecutive;
  int64_t grace_steps = 0;                   // silent until the metric has been seen over this many steps
  int64_t cooldown_steps = 0;                // after firing at step s, silent through step s + cooldown
  std::vector<RuleAction> actions;           // default: warn
  // Values per metric (steps 1, 2, ...) that must make the rule fire, and values that must leave it quiet: every
  // built-in rule carries both, and the tests replay them.
  std::map<std::string, std::vector<double>> test_fires, test_quiet;
  std::string origin;                        // file:line where the rule is defined

  bool stops() const;                        // has a stop action
};

struct RuleSet {
  std::vector<Rule> rules;
  std::vector<std::string> warnings;  // path:line:col: what was ignored (unknown fields)
  const Rule* find(const std::string& id) const;
};

// Parses a rules file (YAML text). Errors carry "path:line:column" in their context and say what was expected.
Result<RuleSet> parse_rules(const std::string& yaml_text, const std::string& origin);
Result<RuleSet> load_rules_file(const std::string& path);

// Built-in presets (data/presets/*.yaml).
std::vector<std::string> preset_names();
Result<RuleSet> load_preset(const std::string& name);

// Applies an override "RULE_ID.FIELD=VALUE" (fields: condition, where, window.size, window.kind, grace_steps,
// cooldown_steps, enabled=false to drop the rule).
Status apply_override(RuleSet& rules, const std::string& assignment);

// Appends `more` to `into`; a rule id present in both is an error (ids identify alerts and reports).
Status merge_rule_sets(RuleSet& into, RuleSet more);

}  // namespace rldk
