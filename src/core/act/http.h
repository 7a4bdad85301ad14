// One HTTP request (a webhook POST, a tracking server's GET), cut at a deadline: the request's own timeout or the
// monitor's shutdown deadline, whichever comes first. libcurl's multi interface is polled in short slices so a cancelled request stops within one slice,
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
  std::string body;  // sent as application/json (not for GET)
  std::map<std::string, std::string> headers;
  std::string user, password;  // HTTP basic authentication when `user` is set
  double timeout_seconds = 5.0;
  // When set, the response body is stored here (else discarded); a body longer than max_response_bytes fails the
  // request rather than filling memory.
  std::string* response = nullptr;
  size_t max_response_bytes = size_t{256} << 20;
};

// The HTTP status, or an error (io). A request cut by `cancel` fails with "cut at the shutdown deadline".
Result<long> send_http(const HttpRequest& request, const Cancel& cancel);

}  // namespace rldk::act
