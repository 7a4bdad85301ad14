// The rule engine behind `rldk monitor` and rldk.Monitor: observations in, alerts out.
//
// Rules are evaluated when a step is complete — when a later step of the same run arrives, or at flush() (the
// monitor flushes whenever its input is drained, so a live alert waits for nothing but the line itself). Waiting for
// the step to complete lets a rule read other metrics of the same step (metric("value/grad_norm")) regardless of
// the order a trainer logs them in. Cost per observation: O(rules watching that metric x window).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rldk/json.h"
#include "rldk/rules.h"

namespace rldk {

struct Observation {
  std::string run_id;
  std::string name;      // canonical
  std::string raw_name;  // as logged (legacy `where: name in ("kl_mean")` rules match it too)
  int64_t step = 0;
  double value = 0.0;
  double time = 0.0;     // epoch seconds, NaN when unknown
  std::map<std::string, std::string> tags;
  std::map<std::string, std::string> meta;
};

struct Alert {
  std::string rule_id;
  std::string run_id;
  std::string metric;
  int64_t step = 0;
  double value = 0.0;
  double time = 0.0;
  std::vector<double> window;  // the values the condition saw, oldest first
  std::string message;         // the warn text
  bool stop = false;           // the rule asks to stop the run
  const Rule* rule = nullptr;  // owned by the engine's RuleSet
};

class RuleEngine {
 public:
  explicit RuleEngine(RuleSet rules);
  ~RuleEngine();
  RuleEngine(RuleEngine&&) noexcept;
  RuleEngine& operator=(RuleEngine&&) noexcept;

  void observe(Observation observation, std::vector<Alert>& alerts);
  // The same without strings on the hot path: a reader resolves each (run, canonical name, name as logged) once,
  // then passes observations by handle. Handles stay valid for the engine's life.
  using SeriesHandle = uint32_t;
  SeriesHandle series(std::string_view run_id, std::string_view name, std::string_view raw_name);
  void observe(SeriesHandle series, int64_t step, double value, double time, std::vector<Alert>& alerts);
  void flush(std::vector<Alert>& alerts);  // evaluates every pending step
  // A training setting the run's log printed (data/metrics.yaml `settings`, e.g. entropy_coeff): a rule that names a
  // scan detector eased by that setting (an entropy rise in a run with an entropy bonus) stays quiet where the scan
  // reports only a note. An empty run_id sets it for every run that printed none of its own: the trainer's console
  // under `monitor --cmd` prints the config, while its metrics arrive through a file under another run id.
  void setting(std::string_view run_id, std::string_view name, double value);
  // End of data: flushes, then rules whose detector judges whole episodes (a steady trend, a shift still open) get
  // its verdict; an alert it raises carries the series' latest observation. Called once, when the data has ended.
  void finish(std::vector<Alert>& alerts);
  const RuleSet& rules() const;
  uint64_t observations() const;
  uint64_t evaluation_errors() const;  // conditions that could not be evaluated (e.g. a missing metric)
  // Per rule: activations, first and last activation (rldk.monitor-report/v1 "rules" object).
  Json rule_report() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The alert's identity as JSON: rule_id, run_id, metric, step, value, message (shared by reports, alert records and
// webhook payloads).
Json alert_json(const Alert& alert);

// Formats a message template: {name}, {metric}, {value}, {step}, {rule_id}, {run_id}, {time}, with optional
// Python-style precision: {value:.3f}, {value:.2e}, {value:.4g}. Unknown fields are left as written.
std::string format_alert_message(const std::string& templ, const Alert& alert);

}  // namespace rldk
