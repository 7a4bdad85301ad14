#include "io/wandb_server.h"

#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "act/http.h"
#include "io/lenient_json.h"
#include "io/records.h"
#include "rldk/event_writer.h"
#include "rldk/json.h"

namespace rldk::io {
namespace {

// The query W&B's client pages a run's history with, plus the run's state and its last step in the same answer.
constexpr const char* HISTORY_QUERY =
    "query RunHistoryPage($entity: String!, $project: String!, $run: String!, $minStep: Int64!, $maxStep: Int64!, "
    "$pageSize: Int!) { project(name: $project, entityName: $entity) { run(name: $run) { state historyKeys "
    "history(minStep: $minStep, maxStep: $maxStep, samples: $pageSize) } } }";

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The host of an http(s) URL, for the netrc lookup.
std::string host_of(const std::string& url) {
  size_t begin = url.find("://");
  begin = begin == std::string::npos ? 0 : begin + 3;
  size_t end = url.find_first_of(":/", begin);
  return url.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The password of `machine host` in a netrc file: whitespace-separated tokens, `machine NAME` starting an entry,
// `password VALUE` inside it. Written here because it is a dozen lines and no library in the build reads netrc.
std::string netrc_password(const std::string& path, const std::string& host) {
  std::ifstream in(path);
  if (!in) return "";
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  bool in_entry = false;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i] == "machine") in_entry = tokens[i + 1] == host;
    else if (tokens[i] == "default") in_entry = false;
    else if (in_entry && tokens[i] == "password") return tokens[i + 1];
  }
  return "";
}

// W&B's extended JSON carries NaN and Infinity; a row may spell them as bare words or as strings.
bool row_number(const FlatRecord& record, const FlatField& f, double& value) {
  if (f.kind == ValueKind::number) {
    value = f.number;
    return true;
  }
  if (f.kind != ValueKind::string) return false;  // booleans, nulls and text are not values
  std::string_view s = record.str(f);
  if (s == "NaN") value = NAN;
  else if (s == "Infinity") value = INFINITY;
  else if (s == "-Infinity") value = -INFINITY;
  else return false;
  return true;
}

}  // namespace

Result<WandbServerRun> wandb_server_run_from_environment(const std::string& path) {
  WandbServerRun run;
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
    return Error{ErrorCode::invalid_argument, "expected ENTITY/PROJECT/RUN (the run's id, as in its URL)", path};
  }
  run.entity = parts[0];
  run.project = parts[1];
  run.run = parts[2];
  if (std::string base = environment("WANDB_BASE_URL"); !base.empty()) run.base_url = base;
  while (!run.base_url.empty() && run.base_url.back() == '/') run.base_url.pop_back();
  run.api_key = environment("WANDB_API_KEY");
  if (run.api_key.empty()) {
    std::string netrc = environment("NETRC");
    if (netrc.empty() && !environment("HOME").empty()) netrc = environment("HOME") + "/.netrc";
    if (!netrc.empty()) run.api_key = netrc_password(netrc, host_of(run.base_url));
  }
  if (run.api_key.empty()) {
    return Error{ErrorCode::not_found,
                 "no local run folder wandb/*-" + run.run + " (under WANDB_DIR or .) and no W&B API key to ask the "
                 "server: set WANDB_API_KEY, or run `wandb login` (which writes ~/.netrc)", run.base_url};
  }
  return run;
}

WandbServerPoller::WandbServerPoller(WandbServerRun run)
    : run_(std::move(run)), steps_(MetricDictionary::builtin()) {}

Status WandbServerPoller::request(int64_t min_step, int64_t max_step, Page& page, std::string& lines,
                                  uint64_t& values, const act::Cancel& cancel) {
  Json variables;
  variables["entity"] = run_.entity;
  variables["project"] = run_.project;
  variables["run"] = run_.run;
  variables["minStep"] = min_step;
  variables["maxStep"] = max_step;
  variables["pageSize"] = max_step - min_step;
  Json body;
  body["query"] = std::string(HISTORY_QUERY);
  body["variables"] = variables;
  std::string response;
  act::HttpRequest http;
  http.url = run_.base_url + "/graphql";
  http.method = "POST";
  http.body = body.dump(-1);
  http.user = "api";  // W&B's API takes HTTP basic authentication with user "api" and the key as password
  http.password = run_.api_key;
  http.timeout_seconds = run_.request_timeout_seconds;
  http.response = &response;
  auto status = act::send_http(http, cancel);
  if (!status.ok()) return Error{ErrorCode::io, "cannot reach the W&B server: " + status.error().message, http.url};
  if (status.value() != 200) {
    return Error{ErrorCode::io, "HTTP " + std::to_string(status.value()) + ": " + response.substr(0, 300), http.url};
  }
  if (Status s = read_page(response, min_step, page, lines, values); !s.ok()) {
    return Error{s.error().code, s.error().message, http.url};
  }
  return Ok{};
}

Status WandbServerPoller::read_page(std::string_view response, int64_t min_step, Page& page, std::string& lines,
                                    uint64_t& values) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(response.data(), response.size()).get(doc) != simdjson::SUCCESS) {
    return Error{ErrorCode::io, "the answer is not JSON", ""};
  }
  simdjson::dom::array errors;
  if (doc["errors"].get_array().get(errors) == simdjson::SUCCESS && errors.size() > 0) {
    std::string_view message;
    if ((*errors.begin())["message"].get_string().get(message) != simdjson::SUCCESS) message = "(no message)";
    return Error{ErrorCode::io, "the W&B API says: " + std::string(message), ""};
  }
  simdjson::dom::element run;
  if (doc["data"]["project"]["run"].get(run) != simdjson::SUCCESS || run.is_null()) {
    return Error{ErrorCode::not_found, "no run " + run_.entity + "/" + run_.project + "/" + run_.run, ""};
  }
  std::string_view state;
  if (run["state"].get_string().get(state) == simdjson::SUCCESS) page.state = std::string(state);
  // historyKeys is a JSON scalar: an object, or its text. (A default dom::element points at no document: it is
  // only read once something was found.)
  simdjson::dom::element keys;
  simdjson::dom::parser keys_parser;
  std::string_view keys_text;
  bool have_keys = false;
  if (run["historyKeys"].get_string().get(keys_text) == simdjson::SUCCESS) {
    have_keys = keys_parser.parse(keys_text.data(), keys_text.size()).get(keys) == simdjson::SUCCESS;
  } else {
    have_keys = run["historyKeys"].get(keys) == simdjson::SUCCESS;
  }
  int64_t last = -1;
  if (have_keys && keys.is_object() && keys["lastStep"].get_int64().get(last) == simdjson::SUCCESS) {
    page.last_step = last;
  }
  simdjson::dom::array rows;
  if (run["history"].get_array().get(rows) != simdjson::SUCCESS) return Ok{};  // no history yet
  FlatRecord record;
  std::vector<WandbItem> items;
  for (simdjson::dom::element row : rows) {
    std::string_view text;
    if (row.get_string().get(text) != simdjson::SUCCESS) {
      return Error{ErrorCode::io, "a history row is not a JSON string", ""};
    }
    ParseError error;
    if (!parse_flat_object(text, record, error)) {
      return Error{ErrorCode::io, "a history row is not a JSON object: " + error.message, ""};
    }
    items.clear();
    for (const FlatField& f : record.fields) {
      double v = 0.0;
      // Nested objects are media and tables (W&B flattens logged dicts into dotted keys itself).
      if (f.depth == 0 && row_number(record, f, v)) items.push_back({record.key(f), v});
    }
    int64_t w_step = -1;
    for (const WandbItem& it : items) {
      int64_t s = 0;
      if (it.key == "_step" && step_from_number(it.value, s)) w_step = s;
    }
    if (w_step < min_step) continue;  // a row before the page (a server that does not filter)
    ++page.rows;
    page.highest_step = std::max(page.highest_step, w_step);
    double wall_time = NAN;
    int64_t step = steps_.step(items, std::nullopt, wall_time);
    for (const WandbItem& it : items) {
      if (!steps_.is_metric(it.key)) continue;
      Event event;
      event.step = step;
      event.name = std::string(it.key);
      event.value = it.value;
      event.wall_time = wall_time;
      event.run_id = run_.run;
      lines += EventWriter::format_line(event);
      lines += '\n';
      ++values;
    }
  }
  return Ok{};
}

Result<ServerPass> WandbServerPoller::poll(const act::Cancel& cancel) {
  ServerPass pass;
  std::string state;
  for (;;) {
    Page page;
    const int64_t end = next_step_ + run_.page_steps;
    if (Status s = request(next_step_, end, page, pass.lines, pass.values, cancel); !s.ok()) return s.error();
    if (state.empty()) state = page.state;  // the state before any row of this pass was read
    // The page covered [next_step_, end): go on while the run's last step lies beyond it; rows logged after the
    // answer was made (beyond lastStep) move the start past them.
    if (page.last_step >= end) {
      next_step_ = end;
      continue;
    }
    next_step_ = std::max({next_step_, page.highest_step + 1, std::min(end, page.last_step + 1)});
    break;
  }
  pass.finished = (state == "finished" || state == "crashed" || state == "failed" || state == "killed") &&
                  pass.values == 0;
  return pass;
}

}  // namespace rldk::io
