#include "io/mlflow_server.h"

#include <simdjson.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "act/http.h"
#include "rldk/event_writer.h"

namespace rldk::io {
namespace {

constexpr int HISTORY_PAGE = 10000;  // values per get-history request (the server's own limit is 25,000)

// Percent-encoding of a query value (RFC 3986 unreserved characters kept). Written here because libcurl's
// curl_easy_escape needs a handle and an allocation per call for what is a few lines.
std::string url_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Standard base64 with padding, for the page token below (no library in the build offers it on its own).
std::string base64(std::string_view bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += table[(n >> shift) & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2) n |= uint8_t(bytes[i + 1]) << 8;
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    out += rest == 2 ? table[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// The page token that starts a history at `offset`: MLflow's servers page by offset, and their token is the
// base64 of {"offset": N}. Not a documented contract, so every resumed page is checked (see the header).
std::string page_token_at(uint64_t offset) { return base64("{\"offset\": " + std::to_string(offset) + "}"); }

using MetricValue = MlflowMetricValue;

// One metric entry of a response. The value is a number, or "NaN" / "Infinity" / "-Infinity" (protobuf's JSON).
// The SQL store keeps +-Infinity as +-DBL_MAX; that substitution is undone, as for the store read from disk.
bool parse_metric(simdjson::dom::element e, MetricValue& out) {
  std::string_view key;
  if (e["key"].get_string().get(key) != simdjson::SUCCESS) return false;
  out.key = std::string(key);
  simdjson::dom::element value;
  if (e["value"].get(value) != simdjson::SUCCESS) return false;
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    if (text == "NaN") out.value = NAN;
    else if (text == "Infinity") out.value = INFINITY;
    else if (text == "-Infinity") out.value = -INFINITY;
    else return false;
  } else if (value.get_double().get(out.value) != simdjson::SUCCESS) {
    int64_t i = 0;
    uint64_t u = 0;
    if (value.get_int64().get(i) == simdjson::SUCCESS) out.value = static_cast<double>(i);
    else if (value.get_uint64().get(u) == simdjson::SUCCESS) out.value = static_cast<double>(u);
    else return false;
  }
  if (out.value == DBL_MAX) out.value = INFINITY;
  if (out.value == -DBL_MAX) out.value = -INFINITY;
  // Protobuf's JSON writes 64-bit integers as strings; a plain number is accepted too.
  for (auto [field, target] : {std::pair{"timestamp", &out.timestamp}, std::pair{"step", &out.step}}) {
    simdjson::dom::element f;
    *target = 0;
    if (e[field].get(f) != simdjson::SUCCESS) continue;
    std::string_view digits;
    if (f.get_string().get(digits) == simdjson::SUCCESS) {
      *target = std::strtoll(std::string(digits).c_str(), nullptr, 10);
    } else if (f.get_int64().get(*target) != simdjson::SUCCESS) {
      return false;
    }
  }
  return true;
}

// A value's identity within its metric.
std::string identity(const MetricValue& m) {
  uint64_t bits = 0;
  std::memcpy(&bits, &m.value, sizeof bits);
  return std::to_string(m.timestamp) + "|" + std::to_string(m.step) + "|" + std::to_string(bits);
}

// The server's error text: {"error_code": ..., "message": ...}, else the start of the body.
std::string server_message(long status, const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view code, message;
  if (parser.parse(body).get(doc) == simdjson::SUCCESS && doc["message"].get_string().get(message) == simdjson::SUCCESS) {
    if (doc["error_code"].get_string().get(code) != simdjson::SUCCESS) code = {};
    return "HTTP " + std::to_string(status) + (code.empty() ? "" : " " + std::string(code)) + ": " + std::string(message);
  }
  return "HTTP " + std::to_string(status) + ": " + body.substr(0, 200);
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Status parse_mlflow_run(std::string_view body, std::string& status, std::vector<MlflowMetricValue>& latest) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc, info;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS ||
      doc["run"]["info"].get(info) != simdjson::SUCCESS) {
    return Error{ErrorCode::io, "the answer to runs/get is not an MLflow run", ""};
  }
  std::string_view text;
  status = info["status"].get_string().get(text) == simdjson::SUCCESS ? std::string(text) : "";
  latest.clear();
  simdjson::dom::array metrics;
  if (doc["run"]["data"]["metrics"].get_array().get(metrics) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : metrics) {
      MetricValue m;
      if (parse_metric(e, m)) latest.push_back(std::move(m));
    }
  }
  return Ok{};
}

Status parse_mlflow_history_page(std::string_view body, std::vector<MlflowMetricValue>& values,
                                 std::string& next_token) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) {
    return Error{ErrorCode::io, "not JSON", ""};
  }
  values.clear();
  next_token.clear();
  // An empty page has no list at all (protobuf's JSON leaves empty fields out), and a default-constructed
  // dom::array must not be iterated (it points at no document).
  simdjson::dom::array page;
  if (doc["metrics"].get_array().get(page) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : page) {
      MetricValue m;
      if (!parse_metric(e, m)) return Error{ErrorCode::io, "a value is not an MLflow metric", ""};
      values.push_back(std::move(m));
    }
  }
  std::string_view next;
  if (doc["next_page_token"].get_string().get(next) == simdjson::SUCCESS) next_token = std::string(next);
  return Ok{};
}

MlflowServerRun mlflow_server_run_from_environment(const std::string& tracking_uri, const std::string& run_id) {
  MlflowServerRun run;
  run.tracking_uri = tracking_uri;
  while (!run.tracking_uri.empty() && run.tracking_uri.back() == '/') run.tracking_uri.pop_back();
  run.run_id = run_id;
  run.token = environment("MLFLOW_TRACKING_TOKEN");
  run.user = environment("MLFLOW_TRACKING_USERNAME");
  run.password = environment("MLFLOW_TRACKING_PASSWORD");
  return run;
}

Status MlflowServerPoller::get(const std::string& path_and_query, std::string& body, const act::Cancel& cancel) const {
  act::HttpRequest request;
  request.url = run_.tracking_uri + path_and_query;
  request.method = "GET";
  request.timeout_seconds = run_.request_timeout_seconds;
  request.response = &body;
  if (!run_.token.empty()) request.headers["Authorization"] = "Bearer " + run_.token;
  else if (!run_.user.empty()) request.user = run_.user, request.password = run_.password;
  auto status = act::send_http(request, cancel);
  if (!status.ok()) return Error{ErrorCode::io, "cannot reach the MLflow tracking server: " + status.error().message, request.url};
  if (status.value() != 200) return Error{ErrorCode::io, server_message(status.value(), body), request.url};
  return Ok{};
}

Status MlflowServerPoller::read_history(const std::string& key, MetricState& state,
                                        const act::Cancel& cancel) {
  // Resumes at the last value delivered (kept as a check), else starts over.
  bool resumed = state.delivered_in_order > 0;
  // Offset 0 is the start of the history, asked for without a token (MLflow refuses a token of offset 0).
  std::string token = state.delivered_in_order > 1 ? page_token_at(state.delivered_in_order - 1) : "";
  bool first_value = true;
  std::string body;
  for (;;) {
    std::string query = "/api/2.0/mlflow/metrics/get-history?run_id=" + url_encode(run_.run_id) +
                        "&metric_key=" + url_encode(key) + "&max_results=" + std::to_string(HISTORY_PAGE);
    if (!token.empty()) query += "&page_token=" + url_encode(token);
    if (Status s = get(query, body, cancel); !s.ok()) {
      if (!resumed || !first_value || cancel.cancelled()) return s;
      // The server refused the resumed page's token (it pages otherwise): read the whole history instead.
      state.delivered_in_order = 0;
      return read_history(key, state, cancel);
    }
    std::vector<MetricValue> page;
    std::string next;
    if (Status s = parse_mlflow_history_page(body, page, next); !s.ok()) {
      return Error{ErrorCode::io, "the metric history of " + key + ": " + s.error().message, run_.tracking_uri};
    }
    for (const MetricValue& m : page) {
      std::string id = identity(m);
      if (resumed && first_value && id != state.last) {
        // The history moved under the resumed page: read it whole, deliver only what was not delivered.
        state.delivered_in_order = 0;
        return read_history(key, state, cancel);
      }
      first_value = false;
      ++state.delivered_in_order;
      state.last = id;
      if (!state.seen.insert(std::move(id)).second) continue;
      Event& event = events_.emplace_back();
      event.step = m.step;
      event.name = key;
      event.value = m.value;
      event.wall_time = static_cast<double>(m.timestamp) / 1000.0;
      event.run_id = run_.run_id;
    }
    if (next.empty()) break;
    token = std::move(next);
  }
  if (resumed && first_value) {
    // Not even the last value delivered came back: the history shrank (deleted, or another paging), start over.
    state.delivered_in_order = 0;
    return read_history(key, state, cancel);
  }
  return Ok{};
}

Result<ServerPass> MlflowServerPoller::poll(const act::Cancel& cancel) {
  ServerPass pass;
  std::string body;
  if (Status s = get("/api/2.0/mlflow/runs/get?run_id=" + url_encode(run_.run_id), body, cancel); !s.ok()) {
    return s.error();
  }
  std::string status;
  std::vector<MetricValue> latest;
  if (Status s = parse_mlflow_run(body, status, latest); !s.ok()) {
    return Error{ErrorCode::io, s.error().message, run_.tracking_uri};
  }
  // The status is read before the histories: a run that ends during this pass is reported ended by the next one,
  // after its last values were read.
  bool ended = status == "FINISHED" || status == "FAILED" || status == "KILLED";
  for (const MetricValue& m : latest) {
    MetricState& state = metrics_[m.key];
    std::string id = identity(m);
    if (id == state.latest) continue;
    if (Status s = read_history(m.key, state, cancel); !s.ok()) return s.error();
    state.latest = std::move(id);
  }
  // Histories come metric by metric; the rules see them step by step, as a trainer logs them.
  std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return a.step != b.step ? a.step < b.step : a.wall_time < b.wall_time;
  });
  for (const Event& event : events_) {
    pass.lines += EventWriter::format_line(event);
    pass.lines += '\n';
  }
  pass.values = events_.size();
  events_.clear();
  pass.finished = ended && pass.values == 0;
  return pass;
}

}  // namespace rldk::io
