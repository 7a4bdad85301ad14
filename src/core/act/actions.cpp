#include "rldk/actions.h"

#include <curl/curl.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "io/time_parse.h"
#include "rldk/process.h"

namespace rldk {
namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

std::string param(const RuleAction& a, const std::string& key, const std::string& fallback = "") {
  auto it = a.params.find(key);
  return it == a.params.end() ? fallback : it->second;
}

double param_number(const RuleAction& a, const std::string& key, double fallback) {
  auto it = a.params.find(key);
  if (it == a.params.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  return (end && *end == '\0' && std::isfinite(v) && v >= 0) ? v : fallback;
}

constexpr size_t MAX_SHELL_OUTPUT = 4096;  // kept in the record, enough for an error message

size_t discard_body(char*, size_t size, size_t count, void*) { return size * count; }

// One HTTP POST; returns the status code, or an error.
Result<long> post_json(const std::string& url, const std::string& method, const std::string& body,
                       const std::map<std::string, std::string>& headers, double timeout_seconds) {
  CURL* curl = curl_easy_init();
  if (!curl) return Error{ErrorCode::io, "cannot initialise libcurl", url};
  struct curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const auto& [k, v] : headers) list = curl_slist_append(list, (k + ": " + v).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard_body);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Error{ErrorCode::io, curl_easy_strerror(rc), url};
  return status;
}

}  // namespace

Json webhook_payload(const Alert& alert) {
  Json j = alert_json(alert);
  j["text"] = "rldk: " + alert.message + (alert.stop ? " [stop]" : "");
  return j;
}

struct ActionDispatcher::State {
  ActionOptions options;
  mutable std::mutex mutex;
  Json records = Json::Array{};
  std::ofstream jsonl, txt;
  bool stop_requested = false;
  // Worker for slow actions.
  std::deque<std::function<void()>> queue;
  std::condition_variable wake, idle;
  bool busy = false;
  bool closing = false;
  std::thread worker;

  void record(const Alert& alert, const std::string& action, bool ok, const std::string& message, Json details) {
    Json r = alert_json(alert);
    r["action"] = action;
    if (std::isfinite(alert.time)) r["time"] = io::format_iso8601(alert.time);
    if (options.timestamps) r["ts"] = io::format_iso8601(now_seconds());
    r["status"] = ok ? "ok" : "error";
    r["message"] = message;
    if (!details.is_null()) r["details"] = std::move(details);
    std::lock_guard<std::mutex> lock(mutex);
    if (jsonl.is_open()) {
      jsonl << r.dump(-1) << "\n";
      jsonl.flush();
    }
    records.push_back(std::move(r));
    if (!ok && options.console) std::fprintf(options.console, "rldk: %s action of %s failed: %s\n", action.c_str(),
                                             alert.rule_id.c_str(), message.c_str());
  }

  void run_worker() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return closing || !queue.empty(); });
      if (queue.empty()) return;
      auto job = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      job();
      lock.lock();
      busy = false;
      idle.notify_all();
    }
  }

  void enqueue(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!worker.joinable()) worker = std::thread([this] { run_worker(); });
      queue.push_back(std::move(job));
    }
    wake.notify_one();
  }

  void http(const Alert& alert, const RuleAction& a) {
    std::string url = param(a, "url");
    std::string method = param(a, "method", "POST");
    double timeout = param_number(a, "timeout", options.http_timeout_seconds);
    int retries = static_cast<int>(param_number(a, "retries", options.http_retries));
    std::string body = webhook_payload(alert).dump(-1);
    Json attempts = Json::Array{};
    for (int attempt = 0; attempt <= retries; ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(options.retry_backoff_seconds * (1 << (attempt - 1))));
      }
      auto status = post_json(url, method, body, a.headers, timeout);
      attempts.push_back(status.ok() ? Json(static_cast<int64_t>(status.value())) : Json(status.error().message));
      if (status.ok() && status.value() >= 200 && status.value() < 300) {
        Json details;
        details["url"] = url;
        details["attempts"] = attempts;
        record(alert, "http", true, "HTTP " + method + " " + url + " -> " + std::to_string(status.value()), details);
        return;
      }
    }
    Json details;
    details["url"] = url;
    details["attempts"] = attempts;
    record(alert, "http", false, "HTTP " + method + " " + url + " failed after " + std::to_string(retries + 1) +
                                     " attempts", details);
  }

  void shell(const Alert& alert, const RuleAction& a) {
    std::string cmd = format_alert_message(param(a, "cmd"), alert);
    SpawnOptions spawn;
    spawn.environment = {{"RLDK_RULE_ID", alert.rule_id}, {"RLDK_RUN_ID", alert.run_id},
                         {"RLDK_METRIC", alert.metric}, {"RLDK_STEP", std::to_string(alert.step)},
                         {"RLDK_MESSAGE", alert.message}};
    auto child = ChildProcess::spawn(cmd, spawn);
    if (!child.ok()) {
      record(alert, "shell", false, "cannot run '" + cmd + "': " + child.error().message, nullptr);
      return;
    }
    std::string output;
    auto keep = [&](OutputStream, std::string_view bytes) {
      if (output.size() < MAX_SHELL_OUTPUT) output.append(bytes.substr(0, MAX_SHELL_OUTPUT - output.size()));
    };
    auto timeout = std::chrono::duration<double>(param_number(a, "timeout", options.shell_timeout_seconds));
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<ExitStatus> status;
    bool timed_out = false;
    while (!(status = child.value().try_wait())) {
      child.value().read_output(keep);
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        status = child.value().terminate(std::chrono::milliseconds(1000), keep).status;
        break;
      }
      child.value().wait_for(std::chrono::milliseconds(20));
    }
    child.value().read_output(keep);
    Json details;
    details["cmd"] = cmd;
    details["output"] = output;
    bool ok = !timed_out && status && status->success();
    details["exit"] = status ? status->describe() : std::string("unknown");
    record(alert, "shell", ok, "shell '" + cmd + "' " + (ok ? "succeeded" : timed_out ? "timed out" : "failed"),
           details);
  }
};

ActionDispatcher::ActionDispatcher(ActionOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  for (auto [path, stream] : {std::pair{&state_->options.alerts_jsonl, &state_->jsonl},
                              std::pair{&state_->options.alerts_txt, &state_->txt}}) {
    if (path->empty()) continue;
    std::error_code ec;
    auto parent = std::filesystem::path(*path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    stream->open(*path, std::ios::out | std::ios::trunc);
  }
}

ActionDispatcher::~ActionDispatcher() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->closing = true;
  }
  state_->wake.notify_all();
  if (state_->worker.joinable()) state_->worker.join();
}

void ActionDispatcher::drain() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->idle.wait(lock, [&] { return state_->queue.empty() && !state_->busy; });
}

bool ActionDispatcher::stop_requested() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stop_requested;
}

Json ActionDispatcher::records() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->records;
}

void ActionDispatcher::dispatch(const Alert& alert) {
  State& s = *state_;
  std::string line = std::string(alert.stop ? "STOP " : "WARN ") + alert.rule_id + ": " + alert.message;
  if (s.options.console) std::fprintf(s.options.console, "rldk: %s\n", line.c_str());
  if (s.txt.is_open()) {
    s.txt << line << "\n";
    s.txt.flush();
  }
  static const RuleAction WARN{"warn", {}, {}};
  const std::vector<RuleAction>& actions = alert.rule ? alert.rule->actions : std::vector<RuleAction>{WARN};
  for (const RuleAction& a : actions) {
    if (a.kind == "warn") {
      s.record(alert, "warn", true, alert.message, nullptr);
    } else if (a.kind == "stop") {
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(s.mutex);
        first = !s.stop_requested;
        s.stop_requested = true;
      }
      std::string msg = format_alert_message(param(a, "msg", "stopping the run: {metric} = {value:.4g} at step {step}"), alert);
      if (!first) {
        s.record(alert, "stop", true, msg + " (a stop is already under way)", nullptr);
      } else if (!s.options.stop) {
        s.record(alert, "stop", false, msg + ": no trainer to stop (give --cmd or --pid)", nullptr);
      } else {
        auto done = s.options.stop(alert);
        s.record(alert, "stop", done.ok(), msg + ": " + (done.ok() ? done.value() : done.error().message), nullptr);
      }
    } else if (a.kind == "sentinel") {
      std::string path = format_alert_message(param(a, "path"), alert);
      std::string contents = format_alert_message(param(a, "contents", alert.message), alert);
      std::error_code ec;
      auto parent = std::filesystem::path(path).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent, ec);
      std::ofstream out(path, param(a, "append") == "true" ? std::ios::app : std::ios::trunc);
      out << contents << "\n";
      out.close();
      Json details;
      details["path"] = path;
      s.record(alert, "sentinel", static_cast<bool>(out), out ? "wrote " + path : "cannot write " + path, details);
    } else if (a.kind == "http") {
      s.enqueue([this, alert, a] { state_->http(alert, a); });
    } else if (a.kind == "shell") {
      if (!s.options.allow_shell) {
        s.record(alert, "shell", false, "shell actions are disabled; run with --allow-shell to enable them", nullptr);
      } else {
        s.enqueue([this, alert, a] { state_->shell(alert, a); });
      }
    }
  }
}

}  // namespace rldk
