// A run on an MLflow tracking server, read through its REST API while it trains (`rldk monitor --from-mlflow` with
// MLFLOW_TRACKING_URI=http://...). Each pass asks for the run (its status and the latest value of each metric),
// then, for each metric whose latest value is new, for the values logged since the last pass
// (/api/2.0/mlflow/metrics/get-history). New values come out as rldk event lines (JSONL), so they go through the
// same reader as a metrics file and carry the run's id.
//
// Exactness: every (step, timestamp, value) of a metric is remembered, so no value is delivered twice and none is
// skipped, in whatever order the server returns them. The history is resumed where the last pass stopped (the
// server orders it by timestamp, step, value and pages by offset); when the first value of the resumed page is not
// the last one delivered (a value was logged with an older timestamp, or the server pages otherwise), the metric's
// whole history is read again and only the values not yet delivered come out.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "act/action_queue.h"
#include "io/server_follower.h"
#include "rldk/event.h"
#include "rldk/result.h"

namespace rldk::io {

struct MlflowServerRun {
  std::string tracking_uri;  // http(s)://host:port[/prefix]
  std::string run_id;
  // Authentication, as MLflow's own client takes it from the environment: MLFLOW_TRACKING_TOKEN (a bearer token),
  // else MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (HTTP basic).
  std::string token, user, password;
  double request_timeout_seconds = 30.0;
};

struct MlflowMetricValue {
  std::string key;
  double value = 0;
  int64_t timestamp = 0;  // milliseconds since the Unix epoch
  int64_t step = 0;
};

// The server's answers, read apart from the requests (public for the fuzzer: they are untrusted input). Errors: io.
// runs/get: the run's status and the latest value of each metric.
Status parse_mlflow_run(std::string_view body, std::string& status, std::vector<MlflowMetricValue>& latest);
// One page of metrics/get-history: its values in the server's order and the next page's token (empty at the end).
Status parse_mlflow_history_page(std::string_view body, std::vector<MlflowMetricValue>& values,
                                 std::string& next_token);

// The run named by `run_id` on the server MLFLOW_TRACKING_URI names, with the environment's credentials.
MlflowServerRun mlflow_server_run_from_environment(const std::string& tracking_uri, const std::string& run_id);

// Reads one run pass by pass; the run has finished when its status is FINISHED, FAILED or KILLED. Not thread-safe
// (a ServerFollower runs it on its own thread).
class MlflowServerPoller final : public ServerPoller {
 public:
  explicit MlflowServerPoller(MlflowServerRun run) : run_(std::move(run)) {}
  Result<ServerPass> poll(const act::Cancel& cancel) override;
  const MlflowServerRun& run() const { return run_; }

 private:
  struct MetricState {
    uint64_t delivered_in_order = 0;  // values of the server's ordered history taken so far
    std::string last;                 // the last of them, as (timestamp, step, value) text, to check a resumed page
    std::string latest;               // the run's latest value of the metric, as the last pass saw it
    std::unordered_set<std::string> seen;
  };
  // Adds the values of `key` not yet delivered to events_.
  Status read_history(const std::string& key, MetricState& state, const act::Cancel& cancel);
  Status get(const std::string& path_and_query, std::string& body, const act::Cancel& cancel) const;

  MlflowServerRun run_;
  std::unordered_map<std::string, MetricState> metrics_;
  std::vector<Event> events_;  // this pass's new values, put in step order at its end
};

}  // namespace rldk::io
