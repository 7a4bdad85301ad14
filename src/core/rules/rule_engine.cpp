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
//
// The hot path carries no strings: a reader resolves each (run, metric as logged) to a SeriesHandle once, and every
// observation after that is four numbers. Windows are contiguous, so conditions read them in place.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <span>
#include <unordered_map>

#include "rldk/metric_dictionary.h"
#include "rldk/monitor.h"
#include "rules/rule_detector.h"

namespace rldk {
namespace {

// True when `value` is beyond a critical absolute level of the metric's healthy range.
bool beyond_critical(const HealthyRange* healthy, double value) {
  if (healthy == nullptr) return false;
  // A side without a critical level is NaN, and every comparison with NaN is false.
  return value > healthy->above.critical || value < healthy->below.critical;
}

// Lookups by std::string_view without building a std::string (metric("name") in conditions runs per evaluation).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using NameIndex = std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>>;

// The last `size` values and steps, contiguous: appended at the back, and the consumed front is cut off only once it
// is as long as the window (amortised O(1), no copy per evaluation, unlike a deque).
class Window {
 public:
  void push(int64_t step, double value, size_t size) {
    values_.push_back(value);
    steps_.push_back(step);
    if (values_.size() - begin_ > size) ++begin_;
    if (begin_ >= std::max<size_t>(size, 16)) {
      values_.erase(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(begin_));
      steps_.erase(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(begin_));
      begin_ = 0;
    }
  }
  void clear() {
    values_.clear();
    steps_.clear();
    begin_ = 0;
  }
  size_t size() const { return values_.size() - begin_; }
  std::span<const double> values() const { return {values_.data() + begin_, size()}; }
  std::span<const int64_t> steps() const { return {steps_.data() + begin_, size()}; }

 private:
  std::vector<double> values_;
  std::vector<int64_t> steps_;
  size_t begin_ = 0;
};

// Tags and meta of an observation that carries them (rldk.Monitor callers may); most carry none.
struct Extra {
  std::map<std::string, std::string> tags, meta;
};

// One observation as the engine keeps it until its step is complete.
struct Event {
  uint32_t alias;
  int64_t step;
  double value;
  double time;
  const Extra* extra;
};

// One rule's state for one series.
struct WindowState {
  size_t rule;
  Window window;
  int64_t first_step = 0;
  int64_t last_step = 0;
  bool started = false;
  bool fired = false;
  int64_t last_fire_step = 0;

  std::unique_ptr<rules::RuleDetector> detector;  // the rule's detector for this series; null without one
  Event last{};  // with a detector: the latest observation, where an alarm at the end of data fires

  void reset() {
    window.clear();
    started = false;
    fired = false;
    if (detector) detector->reset();
  }
};

// One metric of one run: its latest value (for metric("name")), the rules that name it and their windows.
struct Series {
  uint32_t run;
  std::string name;  // canonical
  int64_t step = 0;
  double value = 0.0;
  bool seen = false;
  // A metric the dictionary does not know has no value until its first finite one: a NaN before it is a diagnostic
  // the trainer logs with nothing to compute it from yet (20 attention statistics NaN at every step of a healthy
  // run), not a value that went bad. The scan reads it the same way (detect/run_scanner.cpp, Metric::record).
  bool known = false, had_finite = false;
  const std::vector<size_t>* rules = nullptr;  // rules naming this metric; null if none
  const HealthyRange* healthy = nullptr;       // the metric's healthy range; null for metrics without one
  std::vector<WindowState> windows;            // one per rule that has judged this series, created on first use

  WindowState& window_for(size_t rule) {
    for (auto& w : windows) {
      if (w.rule == rule) return w;
    }
    windows.emplace_back().rule = rule;
    return windows.back();
  }
};

// A series as one name was logged: the raw name (legacy `where: name in ("kl_mean")` rules match it).
struct Alias {
  uint32_t series;
  std::string raw_name;
};

struct RunState {
  std::string id;
  NameIndex series_by_name;
  std::map<std::string, double, std::less<>> settings;  // training settings the run printed (RuleEngine::setting)
  std::vector<Event> pending;  // observations of the step not yet evaluated
  std::deque<Extra> extras;    // tags and meta of pending observations (stable addresses)
};

struct RuleStats {
  uint64_t activations = 0;
  bool any = false;
  Alert first, last;
};

}  // namespace

struct RuleEngine::State {
  RuleSet rules;
  // Rules that name their metrics, indexed by canonical name; rules with only a `where` filter see everything.
  std::unordered_map<std::string, std::vector<size_t>> rules_by_metric;
  std::vector<size_t> filter_rules;
  std::vector<RunState> runs;
  std::map<std::string, double, std::less<>> default_settings;  // RuleEngine::setting with no run id
  NameIndex run_index;
  std::vector<Series> series;
  std::vector<Alias> aliases;
  NameIndex alias_index;  // run id, canonical name and raw name joined by '\0'
  std::vector<RuleStats> stats;
  std::vector<std::vector<std::string>> referenced;  // per rule: metrics its condition reads with metric("...")
  std::vector<bool> element_wise;                    // per rule: the condition has no window function
  uint64_t observations = 0;
  uint64_t errors = 0;

  const Series* find_series(const RunState& run, std::string_view name) const {
    auto it = run.series_by_name.find(name);
    return it == run.series_by_name.end() ? nullptr : &series[it->second];
  }

  // What a condition sees at one event: the window it is given, the event's names and the run's other metrics.
  class Context final : public EvalContext {
   public:
    Context(const State& engine, const Event& e, std::span<const double> values, std::span<const int64_t> steps,
            bool use_raw_name)
        : engine_(engine), e_(e), values_(values), steps_(steps), use_raw_name_(use_raw_name) {}
    std::span<const double> window_values() const override { return values_; }
    std::span<const int64_t> window_steps() const override { return steps_; }
    double time() const override { return e_.time; }
    std::string_view name() const override {
      const Alias& a = engine_.aliases[e_.alias];
      return use_raw_name_ ? std::string_view(a.raw_name) : std::string_view(engine_.series[a.series].name);
    }
    std::string_view run_id() const override { return engine_.runs[engine_.series[engine_.aliases[e_.alias].series].run].id; }
    std::optional<std::string_view> tag(std::string_view key) const override {
      return e_.extra ? lookup(e_.extra->tags, key) : std::nullopt;
    }
    std::optional<std::string_view> meta(std::string_view key) const override {
      return e_.extra ? lookup(e_.extra->meta, key) : std::nullopt;
    }
    std::optional<double> metric(std::string_view name) const override {
      const RunState& run = engine_.runs[engine_.series[engine_.aliases[e_.alias].series].run];
      const Series* s = engine_.find_series(run, name);
      if (s == nullptr || !s->seen || s->step != e_.step) return std::nullopt;
      return s->value;
    }

   private:
    static std::optional<std::string_view> lookup(const std::map<std::string, std::string>& m, std::string_view key) {
      auto it = m.find(std::string(key));
      if (it == m.end()) return std::nullopt;
      return std::string_view(it->second);
    }
    const State& engine_;
    const Event& e_;
    std::span<const double> values_;
    std::span<const int64_t> steps_;
    bool use_raw_name_;
  };

  // The other metrics of a run, as a rule's detector reads them: the latest value of each, unless it was logged at a
  // later step (before a restart, in the segment the run left).
  class RunMetrics final : public rules::RunMetrics {
   public:
    RunMetrics(const State& engine, const RunState& run) : engine_(engine), run_(run) {}
    std::optional<Logged> latest(const std::string& name, int64_t step) const override {
      const Series* s = engine_.find_series(run_, name);
      if (s == nullptr || !s->seen || s->step > step) return std::nullopt;
      return Logged{s->value, s->step};
    }
    std::optional<double> setting(const std::string& name) const override {
      for (const auto* settings : {&run_.settings, &engine_.default_settings}) {
        if (auto it = settings->find(name); it != settings->end()) return it->second;
      }
      return std::nullopt;
    }

   private:
    const State& engine_;
    const RunState& run_;
  };

  // `where` filters see a one-value window of the observation itself.
  bool passes_where(const Rule& rule, const Event& e) const {
    if (!rule.where) return true;
    const double value[1] = {e.value};
    const int64_t step[1] = {e.step};
    if (rule.where->holds(Context(*this, e, value, step, false)) == true) return true;
    // Older rule files name raw metrics (name in ("kl", "kl_mean")): match the name as logged too.
    const Alias& a = aliases[e.alias];
    return a.raw_name != series[a.series].name && rule.where->holds(Context(*this, e, value, step, true)) == true;
  }

  void evaluate_pending(RunState& run, std::vector<Alert>& alerts) {
    for (const Event& e : run.pending) {
      Series& s = series[aliases[e.alias].series];
      if (s.rules) {
        for (size_t r : *s.rules) evaluate(r, e, s, run, alerts);
      }
      for (size_t r : filter_rules) {
        if (passes_where(rules.rules[r], e)) evaluate(r, e, s, run, alerts);
      }
    }
    run.pending.clear();
    run.extras.clear();
  }

  void evaluate(size_t r, const Event& e, Series& s, RunState& run, std::vector<Alert>& alerts) {
    const Rule& rule = rules.rules[r];
    if (!rule.metrics.empty() && rule.where && !passes_where(rule, e)) return;
    WindowState& w = s.window_for(r);
    if (w.started && e.step < w.last_step) w.reset();  // a restart: start over
    if (!w.started) {
      w.started = true;
      w.first_step = e.step;
    }
    w.last_step = e.step;
    w.window.push(e.step, e.value, static_cast<size_t>(std::max(rule.window_size, 1)));
    // The detector sees every value (its reference is learned from the first ones), whatever grace and cooldown say.
    if (rule.detector) {
      if (!w.detector) w.detector = rules::make_rule_detector(rule.detector, s.name);
      w.last = e;
      w.last.extra = nullptr;  // kept past the step; tags and meta are not
      if (!w.detector || !w.detector->observe(e.step, e.value, RunMetrics(*this, run))) return;
    }
    judge(r, e, w, s, run, alerts);
  }

  // End of data: detectors close what is still open (a trend is judged on the whole run); a confirmation fires at
  // the series' latest observation. Series in the order the engine first saw them, so alerts come in a stable order.
  void finish(std::vector<Alert>& alerts) {
    for (auto& run : runs) evaluate_pending(run, alerts);
    for (size_t r = 0; r < rules.rules.size(); ++r) {
      for (Series& s : series) {
        for (WindowState& w : s.windows) {
          if (w.rule != r || !w.detector || !w.detector->finish()) continue;
          judge(r, w.last, w, s, runs[s.run], alerts);
        }
      }
    }
  }

  // The rule's window, grace, cooldown and condition at an observation its detector (if any) alarmed at.
  void judge(size_t r, const Event& e, WindowState& w, const Series& s, RunState& run, std::vector<Alert>& alerts) {
    const Rule& rule = rules.rules[r];
    if (static_cast<int>(w.window.size()) < rule.window_size) return;
    if (e.step - w.first_step + 1 < rule.grace_steps && !beyond_critical(s.healthy, e.value)) return;
    if (w.fired && e.step <= w.last_fire_step + rule.cooldown_steps) return;
    // A metric the condition reads that the run logs, but not at this step: the rule cannot judge this step. One the
    // run has not logged at all is missing to the condition (has() is false, comparisons with it are false), so a
    // rule can say what to do for trainers that do not log it.
    for (const auto& name : referenced[r]) {
      const Series* other = find_series(run, name);
      if (other == nullptr || !other->seen) continue;
      if (other->step != e.step) {
        ++errors;
        return;
      }
    }
    if (rule.condition) {
      auto values = w.window.values();
      auto steps = w.window.steps();
      // An element-wise condition holds over the window only if it holds for the latest value, and the latest value
      // alone says whether the result is missing: judge that first, and read the whole window only when it holds.
      if (element_wise[r] && values.size() > 1) {
        std::optional<bool> latest = rule.condition->holds(Context(*this, e, values.last(1), steps.last(1), false));
        if (!latest) ++errors;
        if (latest != true) return;
      }
      std::optional<bool> holds = rule.condition->holds(Context(*this, e, values, steps, false));
      if (!holds) ++errors;
      if (holds != true) return;
    }
    w.fired = true;
    w.last_fire_step = e.step;
    Alert alert;
    alert.rule_id = rule.id;
    alert.run_id = run.id;
    alert.metric = s.name;
    alert.step = e.step;
    alert.value = e.value;
    alert.time = e.time;
    alert.window.assign(w.window.values().begin(), w.window.values().end());
    alert.stop = rule.stops();
    alert.rule = &rule;
    std::string templ = "{metric} = {value:.4g} at step {step} (rule {rule_id})";
    for (const auto& a : rule.actions) {
      auto msg = a.params.find("msg");
      if (a.kind == "warn" && msg != a.params.end()) templ = msg->second;
    }
    alert.message = format_alert_message(templ, alert);
    RuleStats& st = stats[r];
    ++st.activations;
    if (!st.any) st.first = alert;
    st.last = alert;
    st.any = true;
    alerts.push_back(std::move(alert));
  }

  SeriesHandle handle(std::string_view run_id, std::string_view name, std::string_view raw_name) {
    std::string key;
    key.reserve(run_id.size() + name.size() + raw_name.size() + 2);
    key.append(run_id).push_back('\0');
    key.append(name).push_back('\0');
    key.append(raw_name);
    if (auto it = alias_index.find(key); it != alias_index.end()) return it->second;
    auto [run_it, new_run] = run_index.try_emplace(std::string(run_id), static_cast<uint32_t>(runs.size()));
    if (new_run) runs.emplace_back().id = std::string(run_id);
    const uint32_t run = run_it->second;
    auto [series_it, new_series] =
        runs[run].series_by_name.try_emplace(std::string(name), static_cast<uint32_t>(series.size()));
    if (new_series) {
      Series& s = series.emplace_back();
      s.run = run;
      s.name = std::string(name);
      if (auto rs = rules_by_metric.find(s.name); rs != rules_by_metric.end()) s.rules = &rs->second;
      if (const MetricInfo* info = MetricDictionary::builtin().find(s.name)) {
        s.healthy = &info->healthy;
        s.known = true;
      }
    }
    const auto alias = static_cast<SeriesHandle>(aliases.size());
    aliases.push_back(Alias{series_it->second, std::string(raw_name)});
    alias_index.emplace(std::move(key), alias);
    return alias;
  }

  void observe(const Event& e, std::vector<Alert>& alerts) {
    ++observations;
    Series& s = series[aliases[e.alias].series];
    if (!s.known && !s.had_finite) {
      if (!std::isfinite(e.value)) return;
      s.had_finite = true;
    }
    RunState& run = runs[s.run];
    if (!run.pending.empty() && run.pending.front().step != e.step) evaluate_pending(run, alerts);
    s.step = e.step;
    s.value = e.value;
    s.seen = true;
    run.pending.push_back(e);
  }
};

RuleEngine::RuleEngine(RuleSet rules) : state_(std::make_unique<State>()) {
  state_->rules = std::move(rules);
  const size_t n = state_->rules.rules.size();
  state_->stats.resize(n);
  state_->referenced.resize(n);
  state_->element_wise.resize(n);
  for (size_t r = 0; r < n; ++r) {
    const Rule& rule = state_->rules.rules[r];
    if (rule.metrics.empty()) state_->filter_rules.push_back(r);
    if (rule.condition) {
      state_->referenced[r] = rule.condition->metrics_referenced();
      state_->element_wise[r] = !rule.condition->uses_window_function();
    }
    for (const auto& m : rule.metrics) state_->rules_by_metric[m].push_back(r);
  }
}

RuleEngine::~RuleEngine() = default;
RuleEngine::RuleEngine(RuleEngine&&) noexcept = default;
RuleEngine& RuleEngine::operator=(RuleEngine&&) noexcept = default;

RuleEngine::SeriesHandle RuleEngine::series(std::string_view run_id, std::string_view name,
                                            std::string_view raw_name) {
  return state_->handle(run_id, name, raw_name);
}

void RuleEngine::observe(SeriesHandle series, int64_t step, double value, double time, std::vector<Alert>& alerts) {
  state_->observe(Event{series, step, value, time, nullptr}, alerts);
}

void RuleEngine::observe(Observation o, std::vector<Alert>& alerts) {
  Event e{series(o.run_id, o.name, o.raw_name), o.step, o.value, o.time, nullptr};
  if (!o.tags.empty() || !o.meta.empty()) {
    RunState& run = state_->runs[state_->series[state_->aliases[e.alias].series].run];
    // Evaluating the run's pending step first (as observe does) would clear the extra along with it.
    if (!run.pending.empty() && run.pending.front().step != o.step) state_->evaluate_pending(run, alerts);
    run.extras.push_back(Extra{std::move(o.tags), std::move(o.meta)});
    e.extra = &run.extras.back();
  }
  state_->observe(e, alerts);
}

void RuleEngine::setting(std::string_view run_id, std::string_view name, double value) {
  if (run_id.empty()) {
    state_->default_settings[std::string(name)] = value;
    return;
  }
  auto [run_it, new_run] = state_->run_index.try_emplace(std::string(run_id), static_cast<uint32_t>(state_->runs.size()));
  if (new_run) state_->runs.emplace_back().id = std::string(run_id);
  state_->runs[run_it->second].settings[std::string(name)] = value;
}

void RuleEngine::flush(std::vector<Alert>& alerts) {
  for (auto& run : state_->runs) state_->evaluate_pending(run, alerts);
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
