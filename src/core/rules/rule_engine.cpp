// Rule evaluation semantics (docs/rules.md):
//   - A rule keeps, per (run, metric), a window of the last `size` values. A step going backwards for that metric
//     (a restart) clears the window, the grace period and the cooldown.
//   - The condition is evaluated only when the window is full. A condition over the window (value > 0.35 with
//     size 5) must hold for every value in it; aggregates (mean(value) < 0.1) see the whole window. Both window
//     kinds follow this rule; `kind` is accepted for compatibility with older rule files.
//   - grace_steps counts steps, not events: with logging every 10 steps a grace of 50 skips the first 5 values.
//     No grace holds back a value beyond the critical level of its metric's healthy range (data/metrics.yaml):
//     a per-token KL of 1 nat is never start-up noise.
//   - cooldown_steps: after firing at step s, the rule is silent through step s + cooldown_steps.
//   - detector: a rule with one (rules/rule_detector.h) is judged only at the observations where its detector alarms;
//     the detector sees every value, whatever the window, grace and cooldown say.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "rldk/metric_dictionary.h"
#include "rldk/monitor.h"
#include "rules/rule_detector.h"

namespace rldk {
namespace {

// What the engine knows about one metric of one run: a dense id (keys its windows), its latest value (for
// metric("name") in conditions) and the rules that name it. One hash lookup per observation finds all three.
struct SeriesInfo {
  uint32_t id = 0;
  int64_t step = 0;
  double value = 0.0;
  bool seen = false;
  const std::vector<size_t>* rules = nullptr;  // rules naming this metric; null if none
  const HealthyRange* healthy = nullptr;       // the metric's healthy range; null for metrics without one
};

// True when `value` is beyond a critical absolute level of the metric's healthy range.
bool beyond_critical(const HealthyRange* healthy, double value) {
  if (healthy == nullptr) return false;
  // A side without a critical level is NaN, and every comparison with NaN is false.
  return value > healthy->above.critical || value < healthy->below.critical;
}
using SeriesMap = std::unordered_map<std::string, SeriesInfo>;

struct WindowState {
  std::deque<double> values;
  std::deque<int64_t> steps;
  int64_t first_step = 0;
  int64_t last_step = 0;
  bool started = false;
  bool fired = false;
  int64_t last_fire_step = 0;
  std::vector<double> values_scratch;   // contiguous copies for the evaluator
  std::vector<int64_t> steps_scratch;

  std::unique_ptr<rules::RuleDetector> detector;  // the rule's detector for this series; null without one
  Observation last;  // with a detector: the latest observation, where an alarm at the end of data fires

  void reset() {
    values.clear();
    steps.clear();
    started = false;
    fired = false;
    if (detector) detector->reset();
  }
};

struct RuleStats {
  uint64_t activations = 0;
  bool any = false;
  Alert first, last;
};

class ObservationContext final : public EvalContext {
 public:
  ObservationContext(const Observation& o, const WindowState& w,
                     const SeriesMap& latest, bool use_raw_name)
      : o_(o), w_(w), latest_(latest), use_raw_name_(use_raw_name) {}
  std::span<const double> window_values() const override { return w_.values_scratch; }
  std::span<const int64_t> window_steps() const override { return w_.steps_scratch; }
  double time() const override { return o_.time; }
  std::string_view name() const override { return use_raw_name_ ? o_.raw_name : o_.name; }
  std::string_view run_id() const override { return o_.run_id; }
  std::optional<std::string_view> tag(std::string_view key) const override { return lookup(o_.tags, key); }
  std::optional<std::string_view> meta(std::string_view key) const override { return lookup(o_.meta, key); }
  std::optional<double> metric(std::string_view name) const override {
    auto it = latest_.find(std::string(name));
    if (it == latest_.end() || !it->second.seen || it->second.step != o_.step) return std::nullopt;
    return it->second.value;
  }

 private:
  static std::optional<std::string_view> lookup(const std::map<std::string, std::string>& m, std::string_view key) {
    auto it = m.find(std::string(key));
    if (it == m.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  const Observation& o_;
  const WindowState& w_;
  const SeriesMap& latest_;
  bool use_raw_name_;
};

// The other metrics of a run, as a rule's detector reads them: the latest value of each, unless it was logged at a
// later step (before a restart, in the segment the run left).
class SeriesMetrics final : public rules::RunMetrics {
 public:
  explicit SeriesMetrics(const SeriesMap& series) : series_(series) {}
  std::optional<double> latest(const std::string& name, int64_t step) const override {
    auto it = series_.find(name);
    if (it == series_.end() || !it->second.seen || it->second.step > step) return std::nullopt;
    return it->second.value;
  }

 private:
  const SeriesMap& series_;
};

// `where` filters see a one-value window of the observation itself.
bool passes_where(const Rule& rule, const Observation& o, const SeriesMap& latest,
                  WindowState& scratch) {
  if (!rule.where) return true;
  scratch.values_scratch.assign(1, o.value);
  scratch.steps_scratch.assign(1, o.step);
  if (all_true(rule.where->evaluate(ObservationContext(o, scratch, latest, false)))) return true;
  // Older rule files name raw metrics (name in ("kl", "kl_mean")): match the name as logged too.
  return o.raw_name != o.name && all_true(rule.where->evaluate(ObservationContext(o, scratch, latest, true)));
}

}  // namespace

struct RuleEngine::State {
  RuleSet rules;
  // Rules that name their metrics, indexed by canonical name; rules with only a `where` filter see everything.
  std::unordered_map<std::string, std::vector<size_t>> rules_by_metric;
  std::vector<size_t> filter_rules;
  struct RunState {
    std::vector<std::pair<Observation, const SeriesInfo*>> pending;  // observations of the step not yet evaluated
    SeriesMap series;
  };
  std::unordered_map<std::string, RunState> runs;
  uint32_t next_series = 0;
  // Window state per rule, per series (run + metric).
  std::vector<std::unordered_map<uint32_t, WindowState>> windows;
  std::vector<RuleStats> stats;
  std::vector<std::vector<std::string>> referenced;  // per rule: metrics its condition reads with metric("...")
  WindowState where_scratch;
  uint64_t observations = 0;
  uint64_t errors = 0;

  void evaluate_pending(RunState& run, std::vector<Alert>& alerts) {
    for (const auto& [o, series] : run.pending) {
      if (series->rules) {
        for (size_t r : *series->rules) evaluate(r, o, series->id, series->healthy, run, alerts);
      }
      for (size_t r : filter_rules) {
        if (passes_where(rules.rules[r], o, run.series, where_scratch)) {
          evaluate(r, o, series->id, series->healthy, run, alerts);
        }
      }
    }
    run.pending.clear();
  }

  void evaluate(size_t r, const Observation& o, uint32_t series, const HealthyRange* healthy, RunState& run,
                std::vector<Alert>& alerts) {
    const Rule& rule = rules.rules[r];
    if (!rule.metrics.empty() && rule.where && !passes_where(rule, o, run.series, where_scratch)) return;
    WindowState& w = windows[r][series];
    if (w.started && o.step < w.last_step) w.reset();  // a restart: start over
    if (!w.started) {
      w.started = true;
      w.first_step = o.step;
    }
    w.last_step = o.step;
    w.values.push_back(o.value);
    w.steps.push_back(o.step);
    while (static_cast<int>(w.values.size()) > rule.window_size) {
      w.values.pop_front();
      w.steps.pop_front();
    }
    // The detector sees every value (its reference is learned from the first ones), whatever grace and cooldown say.
    if (rule.detector) {
      if (!w.detector) {
        w.detector = rules::make_rule_detector(rule.detector, o.name);
        w.last.run_id = o.run_id;
        w.last.name = o.name;
        w.last.raw_name = o.raw_name;
      }
      w.last.step = o.step;
      w.last.value = o.value;
      w.last.time = o.time;
      if (!w.detector || !w.detector->observe(o.step, o.value, SeriesMetrics(run.series))) return;
    }
    judge(r, o, w, healthy, run, alerts);
  }

  // End of data: detectors close what is still open (a trend is judged on the whole run); a confirmation fires at
  // the series' latest observation. Series in the order the engine first saw them, so alerts come in a stable order.
  void finish(std::vector<Alert>& alerts) {
    for (auto& [id, run] : runs) evaluate_pending(run, alerts);
    for (size_t r = 0; r < rules.rules.size(); ++r) {
      std::vector<std::pair<uint32_t, WindowState*>> watched;
      for (auto& [series, w] : windows[r]) {
        if (w.detector) watched.emplace_back(series, &w);
      }
      std::sort(watched.begin(), watched.end());
      for (auto& [series, w] : watched) {
        if (!w->detector->finish()) continue;
        RunState& run = runs[w->last.run_id];
        auto info = run.series.find(w->last.name);
        judge(r, w->last, *w, info == run.series.end() ? nullptr : info->second.healthy, run, alerts);
      }
    }
  }

  // The rule's window, grace, cooldown and condition at an observation its detector (if any) alarmed at.
  void judge(size_t r, const Observation& o, WindowState& w, const HealthyRange* healthy, RunState& run,
             std::vector<Alert>& alerts) {
    const Rule& rule = rules.rules[r];
    if (static_cast<int>(w.values.size()) < rule.window_size) return;
    if (o.step - w.first_step + 1 < rule.grace_steps && !beyond_critical(healthy, o.value)) return;
    if (w.fired && o.step <= w.last_fire_step + rule.cooldown_steps) return;
    // A metric the condition reads that was not logged at this step: the rule cannot judge this step.
    for (const auto& name : referenced[r]) {
      auto it = run.series.find(name);
      if (it == run.series.end() || !it->second.seen || it->second.step != o.step) {
        ++errors;
        return;
      }
    }
    w.values_scratch.assign(w.values.begin(), w.values.end());
    w.steps_scratch.assign(w.steps.begin(), w.steps.end());
    if (rule.condition) {
      Value result = rule.condition->evaluate(ObservationContext(o, w, run.series, false));
      if (result.is_missing()) ++errors;
      if (!all_true(result)) return;
    }
    w.fired = true;
    w.last_fire_step = o.step;
    Alert alert;
    alert.rule_id = rule.id;
    alert.run_id = o.run_id;
    alert.metric = o.name;
    alert.step = o.step;
    alert.value = o.value;
    alert.time = o.time;
    alert.window = w.values_scratch;
    alert.stop = rule.stops();
    alert.rule = &rule;
    std::string templ = "{metric} = {value:.4g} at step {step} (rule {rule_id})";
    for (const auto& a : rule.actions) {
      auto msg = a.params.find("msg");
      if (a.kind == "warn" && msg != a.params.end()) templ = msg->second;
    }
    alert.message = format_alert_message(templ, alert);
    RuleStats& s = stats[r];
    ++s.activations;
    if (!s.any) s.first = alert;
    s.last = alert;
    s.any = true;
    alerts.push_back(std::move(alert));
  }
};

RuleEngine::RuleEngine(RuleSet rules) : state_(std::make_unique<State>()) {
  state_->rules = std::move(rules);
  state_->windows.resize(state_->rules.rules.size());
  state_->stats.resize(state_->rules.rules.size());
  state_->referenced.resize(state_->rules.rules.size());
  for (size_t r = 0; r < state_->rules.rules.size(); ++r) {
    const Rule& rule = state_->rules.rules[r];
    if (rule.metrics.empty()) state_->filter_rules.push_back(r);
    if (rule.condition) state_->referenced[r] = rule.condition->metrics_referenced();
    for (const auto& m : rule.metrics) state_->rules_by_metric[m].push_back(r);
  }
}

RuleEngine::~RuleEngine() = default;
RuleEngine::RuleEngine(RuleEngine&&) noexcept = default;
RuleEngine& RuleEngine::operator=(RuleEngine&&) noexcept = default;

void RuleEngine::observe(Observation o, std::vector<Alert>& alerts) {
  ++state_->observations;
  State::RunState& run = state_->runs[o.run_id];
  if (!run.pending.empty() && run.pending.front().first.step != o.step) state_->evaluate_pending(run, alerts);
  auto [it, inserted] = run.series.try_emplace(o.name);
  SeriesInfo& series = it->second;
  if (inserted) {
    series.id = state_->next_series++;
    auto rules = state_->rules_by_metric.find(o.name);
    if (rules != state_->rules_by_metric.end()) series.rules = &rules->second;
    if (const MetricInfo* info = MetricDictionary::builtin().find(o.name)) series.healthy = &info->healthy;
  }
  series.step = o.step;
  series.value = o.value;
  series.seen = true;
  run.pending.emplace_back(std::move(o), &series);
}

void RuleEngine::flush(std::vector<Alert>& alerts) {
  for (auto& [id, run] : state_->runs) state_->evaluate_pending(run, alerts);
}

void RuleEngine::finish(std::vector<Alert>& alerts) { state_->finish(alerts); }

const RuleSet& RuleEngine::rules() const { return state_->rules; }
uint64_t RuleEngine::observations() const { return state_->observations; }
uint64_t RuleEngine::evaluation_errors() const { return state_->errors; }

Json alert_json(const Alert& a) {
  Json j;
  j["rule_id"] = a.rule_id;
  j["run_id"] = a.run_id;
  j["metric"] = a.metric;
  j["step"] = a.step;
  j["value"] = a.value;
  j["message"] = a.message;
  return j;
}

Json RuleEngine::rule_report() const {
  Json out = Json::Object{};
  for (size_t r = 0; r < state_->rules.rules.size(); ++r) {
    const Rule& rule = state_->rules.rules[r];
    const RuleStats& s = state_->stats[r];
    Json j;
    j["condition"] = rule.condition_text;
    if (rule.detector && !rule.detector->catalog_id.empty()) {
      j["detector"]["id"] = rule.detector->catalog_id;
      j["detector"]["kind"] = rule.detector->kind;
    } else if (rule.detector) {
      j["detector"]["kind"] = rule.detector->kind;
      j["detector"]["direction"] = rule.detector->direction;
      j["detector"]["warmup"] = rule.detector->warmup;
    }
    if (!rule.where_text.empty()) j["where"] = rule.where_text;
    Json metrics = Json::Array{};
    for (const auto& m : rule.metrics) metrics.push_back(m);
    j["metrics"] = metrics;
    j["window"]["size"] = rule.window_size;
    j["window"]["kind"] = rule.window_kind == WindowKind::rolling ? "rolling" : "consecutive";
    j["grace_steps"] = rule.grace_steps;
    j["cooldown_steps"] = rule.cooldown_steps;
    j["activations"] = s.activations;
    j["stops"] = rule.stops();
    if (s.any) {
      j["first_activation"] = alert_json(s.first);
      j["last_activation"] = alert_json(s.last);
    }
    out[rule.id] = j;
  }
  return out;
}

std::string format_alert_message(const std::string& templ, const Alert& alert) {
  std::string out;
  for (size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] != '{') {
      out.push_back(templ[i]);
      continue;
    }
    size_t close = templ.find('}', i);
    if (close == std::string::npos) {
      out.append(templ, i, std::string::npos);
      break;
    }
    std::string field = templ.substr(i + 1, close - i - 1);
    std::string spec;
    if (auto colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    std::string text;
    auto number = [&](double v) {
      char buffer[64];
      int precision = 6;
      char conv = 'g';
      bool percent = false;
      if (!spec.empty() && spec[0] == '.') {
        precision = std::atoi(spec.c_str() + 1);
        char last = spec.back();
        if (last == 'f' || last == 'e' || last == 'g') conv = last;
        if (last == '%') {  // Python's {x:.0%}: a fraction printed as a percentage
          conv = 'f';
          percent = true;
          v *= 100.0;
        }
      }
      precision = std::min(std::max(precision, 0), 17);
      char format[8] = {'%', '.', '*', conv, '\0'};
      std::snprintf(buffer, sizeof(buffer), format, precision, v);
      return std::string(buffer) + (percent ? "%" : "");
    };
    if (field == "name" || field == "metric") text = alert.metric;
    else if (field == "value") text = number(alert.value);
    else if (field == "step") text = std::to_string(alert.step);
    else if (field == "rule_id") text = alert.rule_id;
    else if (field == "run_id") text = alert.run_id;
    else if (field == "time") text = number(alert.time);
    else text = templ.substr(i, close - i + 1);  // unknown: left as written
    out += text;
    i = close;
  }
  return out;
}

}  // namespace rldk
