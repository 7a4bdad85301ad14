// One webhook request, cut at a deadline: the request's own timeout or the monitor's shutdown deadline, whichever
// comes first. libcurl's multi interface is polled in short slices so a cancelled request stops within one slice,
// even against an endpoint that accepts the connection and never answers.
#pragma once

#include <map>
#include <string>

#include "act/action_queue.h"
#include "rldk/result.h"

namespace rldk::act {

struct HttpRequest {
  std::string url;
  std::string method = "POST";
  std::string body;  // sent as application/json
  std::map<std::string, std::string> headers;
  double timeout_seconds = 5.0;
};

// The HTTP status, or an error (io). A request cut by `cancel` fails with "cut at the shutdown deadline".
Result<long> send_http(const HttpRequest& request, const Cancel& cancel);

}  // namespace rldk::act
