// A run on a tracking server (MLflow's REST API, W&B's GraphQL API), read pass by pass while it trains. A poller
// knows one server's API and turns what is new since its last pass into rldk event lines (JSONL), so new values go
// through the same reader as a metrics file; the follower runs a poller on a thread of its own, so a slow server
// never holds up the monitor's loop.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "act/action_queue.h"
#include "rldk/result.h"

namespace rldk::io {

// What one pass found.
struct ServerPass {
  std::string lines;      // the new values, one rldk event line each
  uint64_t values = 0;    // how many
  bool finished = false;  // the run has ended and this pass found nothing new
};

class ServerPoller {
 public:
  virtual ~ServerPoller() = default;
  // Errors: io (server unreachable, an HTTP error with the server's message, an answer that is not the API's).
  virtual Result<ServerPass> poll(const act::Cancel& cancel) = 0;
};

// Polls every `interval_seconds`.
class ServerFollower {
 public:
  ServerFollower(std::unique_ptr<ServerPoller> poller, double interval_seconds);
  ~ServerFollower();  // stops the thread (an open request is cut within a fraction of a second)
  ServerFollower(const ServerFollower&) = delete;
  ServerFollower& operator=(const ServerFollower&) = delete;

  // The event lines fetched since the last call.
  std::string take_lines();
  // Messages about the server since the last call: the first failure of a series, then one a minute while it
  // lasts, and when it answers again.
  std::vector<std::string> take_problems();
  // The run has ended and everything fetched was taken.
  bool ended() const;

 private:
  void loop(double interval_seconds);

  std::unique_ptr<ServerPoller> poller_;
  act::Cancel cancel_;
  mutable std::mutex mutex_;
  std::string lines_;
  std::vector<std::string> problems_;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace rldk::io
