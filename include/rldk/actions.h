// Actions a firing rule takes: warn (console, alerts.jsonl, alerts.txt), stop (the trainer), sentinel (a file the
// trainer polls), http (a webhook with a Slack-compatible JSON payload) and shell (only when allowed).
// Every action is logged with its outcome as one line of alerts.jsonl; a failed action never stops the monitor.
// Slow actions (http, shell) run on a worker thread so alerts keep flowing while a webhook retries.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "rldk/json.h"
#include "rldk/monitor.h"
#include "rldk/result.h"

namespace rldk {

struct ActionOptions {
  std::string alerts_jsonl;          // one JSON record per executed action; empty: not written
  std::string alerts_txt;            // one human line per alert; empty: not written
  std::FILE* console = stderr;       // where alert lines are printed; nullptr: silent
  bool allow_shell = false;          // shell actions run only when the user allowed them (--allow-shell)
  double http_timeout_seconds = 5.0;
  int http_retries = 2;              // extra attempts after the first, with exponential backoff
  double retry_backoff_seconds = 0.5;
  double shell_timeout_seconds = 30.0;
  bool timestamps = false;           // add the wall-clock time to records (off: outputs stay reproducible)
  // Stops the trainer; returns a description of what was done (or an error). Empty: stop actions are logged as
  // "no trainer to stop" errors.
  std::function<Result<std::string>(const Alert&)> stop;
};

class ActionDispatcher {
 public:
  explicit ActionDispatcher(ActionOptions options);
  ~ActionDispatcher();  // waits for queued http/shell actions
  ActionDispatcher(const ActionDispatcher&) = delete;
  ActionDispatcher& operator=(const ActionDispatcher&) = delete;

  void dispatch(const Alert& alert);
  void drain();  // waits until queued actions have finished
  bool stop_requested() const;
  // The action records written so far (also in alerts.jsonl), in the order actions completed.
  Json records() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The JSON payload posted by http actions: Slack-compatible "text" plus the alert's fields.
Json webhook_payload(const Alert& alert);

}  // namespace rldk
