// Actions a firing rule takes: warn (console, alerts.jsonl, alerts.txt), stop (the trainer), sentinel (a file the
// trainer polls), http (a webhook with a Slack-compatible JSON payload) and shell (only when allowed).
// Every action is logged with its outcome as one line of alerts.jsonl; a failed action never stops the monitor.
// Slow actions run on their own bounded queues (one for http, one for shell), each with a worker thread, so alerts
// keep flowing while a webhook retries and a hung endpoint delays nothing else. A full queue drops its oldest
// waiting action; at shutdown the queues get `deadline_seconds` in total, then what is in flight is cut and what
// waits is abandoned. Every action that was not delivered is logged and counted (delivery()).
// Templated settings go through the placeholder expander (rldk/placeholders.h): sentinel paths are confined to
// `write_roots`, shell commands get every value single-quoted.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  // Total time the http and shell queues get to finish at shutdown (close()); what is left then is not delivered.
  double deadline_seconds = 10.0;
  size_t queue_capacity = 64;        // actions waiting per queue; when full, the oldest waiting one is dropped
  // Folders sentinel files may be written under (the monitor's output folder, the folders of the runs it reads).
  // Empty: the folder of alerts_jsonl, or the working directory without one.
  std::vector<std::string> write_roots;
  // What the session reads: a sentinel file that is, links to, or lies inside one of them is refused.
  std::vector<std::string> inputs;
  bool timestamps = false;           // add the wall-clock time to records (off: outputs stay reproducible)
  // Stops the trainer; returns a description of what was done (or an error). Empty: stop actions are logged as
  // "no trainer to stop" errors.
  std::function<Result<std::string>(const Alert&)> stop;
};

// Slow actions (http, shell) that were queued, and those of them that were not delivered.
struct ActionDelivery {
  uint64_t queued = 0;
  uint64_t delivered = 0;
  uint64_t failed = 0;     // ran to the end without success (error status, unreachable, own timeout, exit code)
  uint64_t dropped = 0;    // pushed out of a full queue by newer actions
  uint64_t abandoned = 0;  // in flight or still waiting at the shutdown deadline
  uint64_t undelivered() const { return failed + dropped + abandoned; }
};

class ActionDispatcher {
 public:
  explicit ActionDispatcher(ActionOptions options);
  ~ActionDispatcher();  // close()
  ActionDispatcher(const ActionDispatcher&) = delete;
  ActionDispatcher& operator=(const ActionDispatcher&) = delete;

  void dispatch(const Alert& alert);
  // Waits until queued actions have finished, or at most deadline_seconds (they keep running after that).
  void drain();
  // Shutdown: queued actions get deadline_seconds in total, then are cut or abandoned; earlier as soon as
  // `give_up` (polled while waiting, e.g. "the user pressed Ctrl-C again") returns true. Idempotent.
  void close(const std::function<bool()>& give_up = {});
  bool stop_requested() const;
  // Per slow action kind ("http", "shell") that was used.
  std::map<std::string, ActionDelivery> delivery() const;
  // The action records written so far (also in alerts.jsonl), in the order actions completed.
  Json records() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The JSON payload posted by http actions: Slack-compatible "text" plus the alert's fields.
Json webhook_payload(const Alert& alert);

}  // namespace rldk
