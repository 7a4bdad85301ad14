// A run on W&B's servers (wandb.ai or a self-hosted W&B server), read through the GraphQL API while it trains
// (`rldk monitor --from-wandb ENTITY/PROJECT/RUN` when the run's .wandb file is not on this machine). Each pass asks
// for the run's state, its last history step and the history rows from the first step not yet read, page by page
// (`project { run { state historyKeys history(minStep, maxStep, samples) } }`, the query W&B's own client pages
// history with); each row becomes points exactly as a row of the run's .wandb file does (io/wandb_history.h).
//
// Tested against a stand-in server that answers that query as W&B documents it (tests/python/test_wandb_api.py),
// not against W&B's own servers, which this project cannot reach.
#pragma once

#include <cstdint>
#include <string>

#include "io/server_follower.h"
#include "io/wandb_history.h"
#include "rldk/result.h"

namespace rldk::io {

struct WandbServerRun {
  std::string base_url = "https://api.wandb.ai";  // WANDB_BASE_URL for a self-hosted server
  std::string entity, project, run;
  std::string api_key;
  double request_timeout_seconds = 30.0;
  int64_t page_steps = 1000;  // history steps per request
};

// "ENTITY/PROJECT/RUN" and the environment, as W&B's client reads it: WANDB_BASE_URL, and the API key from
// WANDB_API_KEY, else the password for the server's host in the netrc file (NETRC, else ~/.netrc) that
// `wandb login` writes. Errors: invalid_argument (not ENTITY/PROJECT/RUN), not_found (no API key).
Result<WandbServerRun> wandb_server_run_from_environment(const std::string& path);

// Reads one run pass by pass; the run has finished when its state is finished, crashed, failed or killed and a pass
// finds nothing new. Not thread-safe (a ServerFollower runs it on its own thread).
class WandbServerPoller final : public ServerPoller {
 public:
  explicit WandbServerPoller(WandbServerRun run);
  Result<ServerPass> poll(const act::Cancel& cancel) override;
  const WandbServerRun& run() const { return run_; }

  // One answer of the server (the body of a 200 response) for the page starting at `min_step`: its rows become
  // event lines appended to `lines`. Errors: io (not the API's answer), not_found (no such run). Public for the
  // fuzzer: the answer is untrusted input.
  struct Page {
    std::string state;
    int64_t last_step = -1;     // historyKeys.lastStep; -1 when the run has no history yet
    uint64_t rows = 0;
    int64_t highest_step = -1;  // the highest `_step` among the rows
  };
  Status read_page(std::string_view response, int64_t min_step, Page& page, std::string& lines, uint64_t& values);

 private:
  Status request(int64_t min_step, int64_t max_step, Page& page, std::string& lines, uint64_t& values,
                 const act::Cancel& cancel);

  WandbServerRun run_;
  int64_t next_step_ = 0;  // W&B's `_step` of the first row not yet read
  WandbRowSteps steps_;
};

}  // namespace rldk::io
