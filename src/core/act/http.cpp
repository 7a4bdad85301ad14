#include "act/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

namespace rldk::act {
namespace {

constexpr int POLL_SLICE_MS = 50;  // how late a cancelled request may notice it was cancelled

size_t discard_body(char*, size_t size, size_t count, void*) { return size * count; }

// Appends to HttpRequest::response; returning less than given makes libcurl fail the transfer (over the limit).
size_t keep_body(char* data, size_t size, size_t count, void* user) {
  auto* request = static_cast<const HttpRequest*>(user);
  size_t n = size * count;
  if (request->response->size() + n > request->max_response_bytes) return 0;
  request->response->append(data, n);
  return n;
}

struct CurlEasy {
  CURL* handle = curl_easy_init();
  curl_slist* headers = nullptr;
  ~CurlEasy() {
    curl_slist_free_all(headers);
    if (handle) curl_easy_cleanup(handle);
  }
};

struct CurlMulti {
  CURLM* handle = curl_multi_init();
  CURL* added = nullptr;
  ~CurlMulti() {
    if (added) curl_multi_remove_handle(handle, added);
    if (handle) curl_multi_cleanup(handle);
  }
};

}  // namespace

Result<long> send_http(const HttpRequest& request, const Cancel& cancel) {
  CurlEasy easy;
  CurlMulti multi;
  if (!easy.handle || !multi.handle) return Error{ErrorCode::io, "cannot initialise libcurl", request.url};
  easy.headers = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const auto& [k, v] : request.headers) easy.headers = curl_slist_append(easy.headers, (k + ": " + v).c_str());
  // The request's own budget, never past the shutdown deadline.
  auto own_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(std::max(request.timeout_seconds, 0.001)));
  auto deadline = std::min(own_deadline, cancel.deadline());
  auto budget_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (budget_ms <= 0) return Error{ErrorCode::io, "cut at the shutdown deadline before it was sent", request.url};
  CURL* c = easy.handle;
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  if (request.method == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  if (!request.user.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, request.user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, request.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, easy.headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(budget_ms));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (request.response) {
    request.response->clear();
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, const_cast<HttpRequest*>(&request));
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
  }
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_multi_add_handle(multi.handle, c);
  multi.added = c;
  int running = 1;
  while (running > 0) {
    if (curl_multi_perform(multi.handle, &running) != CURLM_OK) break;
    if (running == 0) break;
    // The shutdown deadline may have moved closer since the request started.
    if (cancel.cancelled()) return Error{ErrorCode::io, "cut at the shutdown deadline", request.url};
    curl_multi_poll(multi.handle, nullptr, 0, POLL_SLICE_MS, nullptr);
  }
  int left = 0;
  CURLcode rc = CURLE_OK;
  while (CURLMsg* msg = curl_multi_info_read(multi.handle, &left)) {
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == c) rc = msg->data.result;
  }
  if (rc != CURLE_OK) {
    bool cut = rc == CURLE_OPERATION_TIMEDOUT && cancel.deadline() < own_deadline && cancel.cancelled();
    return Error{ErrorCode::io, cut ? "cut at the shutdown deadline" : curl_easy_strerror(rc), request.url};
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

}  // namespace rldk::act
