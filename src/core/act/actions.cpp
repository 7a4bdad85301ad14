#include "rldk/actions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "act/action_queue.h"
#include "act/http.h"
#include "io/time_parse.h"
#include "rldk/output_file.h"
#include "rldk/placeholders.h"
#include "rldk/process.h"
#include "sys/write_all.h"

namespace rldk {
namespace fs = std::filesystem;
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
constexpr int MAX_HTTP_RETRIES = 10;       // a rule file's `retries: 1e9` must not make a retry loop endless
// Once the shutdown deadline has passed, a shell command gets this long after SIGTERM, then this long after SIGKILL.
constexpr auto CANCELLED_SHELL_GRACE = std::chrono::milliseconds(200);
constexpr auto CANCELLED_SHELL_KILL_WAIT = std::chrono::milliseconds(1000);
constexpr auto GIVE_UP_POLL = std::chrono::milliseconds(20);  // how often close() asks whether to give up

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g s", s);
  return buffer;
}

// Appends to a sentinel file without following a symlink planted at its name.
Status append_no_follow(const fs::path& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return Error{ErrorCode::io, std::strerror(errno), path.string()};
  if (int err = sys::write_all(fd, text)) {
    ::close(fd);
    return Error{ErrorCode::io, std::strerror(err), path.string()};
  }
  if (::close(fd) != 0) return Error{ErrorCode::io, std::strerror(errno), path.string()};
  return Ok{};
}

}  // namespace

Json webhook_payload(const Alert& alert) {
  Json j = alert_json(alert);
  j["text"] = "rldk: " + alert.message + (alert.stop ? " [stop]" : "");
  return j;
}

struct ActionDispatcher::State {
  ActionOptions options;
  std::vector<fs::path> write_roots;
  mutable std::mutex mutex;
  Json records = Json::Array{};
  std::ofstream jsonl, txt;
  bool stop_requested = false;
  std::map<std::string, ActionDelivery> delivery;
  // Declared last: destroyed (closed, workers joined) first, while what their jobs touch still exists.
  act::ActionQueue http_queue{1}, shell_queue{1};
  bool closed = false;

  explicit State(ActionOptions o)
      : options(std::move(o)), http_queue(options.queue_capacity), shell_queue(options.queue_capacity) {}

  void record(const Alert& alert, const std::string& action, bool ok, const std::string& message, Json details) {
    Json r = alert_json(alert);
    r["action"] = action;
    if (std::isfinite(alert.time)) {
      std::string iso = io::format_iso8601(alert.time);
      if (iso.empty()) r["time"] = alert.time;  // beyond the years 0000-9999: the number, not a date
      else r["time"] = iso;
    }
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

  // Outcome of a queued action, for delivery().
  void count(const std::string& kind, bool ok, bool cancelled) {
    std::lock_guard<std::mutex> lock(mutex);
    ActionDelivery& d = delivery[kind];
    if (ok) ++d.delivered;
    else if (cancelled) ++d.abandoned;
    else ++d.failed;
  }

  void enqueue(act::ActionQueue& queue, const std::string& kind, const Alert& alert, act::ActionQueue::Job job) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++delivery[kind].queued;
    }
    queue.push(std::move(job), [this, kind, alert](const char* why) {
      bool dropped = std::strcmp(why, "dropped") == 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        ActionDelivery& d = delivery[kind];
        ++(dropped ? d.dropped : d.abandoned);
      }
      record(alert, kind, false,
             dropped ? "not delivered: dropped from the full " + kind + " queue (" +
                           std::to_string(options.queue_capacity) + " newer actions waiting)"
                     : "not delivered: the action deadline (" + seconds_text(options.deadline_seconds) +
                           ") was reached at shutdown",
             nullptr);
    });
  }

  void http(const Alert& alert, const RuleAction& a, const act::Cancel& cancel) {
    act::HttpRequest request;
    request.url = param(a, "url");
    request.method = param(a, "method", "POST");
    request.headers = a.headers;
    request.body = webhook_payload(alert).dump(-1);
    request.timeout_seconds = param_number(a, "timeout", options.http_timeout_seconds);
    int retries = std::min(static_cast<int>(param_number(a, "retries", options.http_retries)), MAX_HTTP_RETRIES);
    Json attempts = Json::Array{};
    int tried = 0;
    auto details = [&] {
      Json d;
      d["url"] = request.url;
      d["attempts"] = attempts;
      return d;
    };
    for (int attempt = 0; attempt <= retries; ++attempt) {
      if (attempt > 0 && !cancel.sleep_for(std::chrono::duration<double>(options.retry_backoff_seconds *
                                                                         (1 << (attempt - 1))))) {
        break;
      }
      auto status = act::send_http(request, cancel);
      ++tried;
      attempts.push_back(status.ok() ? Json(static_cast<int64_t>(status.value())) : Json(status.error().message));
      if (status.ok() && status.value() >= 200 && status.value() < 300) {
        count("http", true, false);
        record(alert, "http", true,
               "HTTP " + request.method + " " + request.url + " -> " + std::to_string(status.value()), details());
        return;
      }
      if (cancel.cancelled()) break;
    }
    bool cut = cancel.cancelled();
    count("http", false, cut);
    record(alert, "http", false,
           "HTTP " + request.method + " " + request.url +
               (cut ? " not delivered: cut at the action deadline (" + seconds_text(options.deadline_seconds) +
                          ") after " + std::to_string(tried) + " attempt(s)"
                    : " failed after " + std::to_string(tried) + " attempts"),
           details());
  }

  void shell(const Alert& alert, const std::string& cmd, const RuleAction& a, const act::Cancel& cancel) {
    SpawnOptions spawn;
    // The values again, unquoted, for commands that would rather read them from the environment.
    spawn.environment = {{"RLDK_RULE_ID", alert.rule_id}, {"RLDK_RUN_ID", alert.run_id},
                         {"RLDK_METRIC", alert.metric}, {"RLDK_STEP", std::to_string(alert.step)},
                         {"RLDK_MESSAGE", alert.message}};
    spawn.stop.kill_wait = CANCELLED_SHELL_KILL_WAIT;
    auto child = ChildProcess::spawn(cmd, spawn);
    if (!child.ok()) {
      count("shell", false, false);
      record(alert, "shell", false, "cannot run '" + cmd + "': " + child.error().message, nullptr);
      return;
    }
    std::string output;
    auto keep = [&](OutputStream, std::string_view bytes) {
      if (output.size() < MAX_SHELL_OUTPUT) output.append(bytes.substr(0, MAX_SHELL_OUTPUT - output.size()));
    };
    auto timeout = std::chrono::duration<double>(param_number(a, "timeout", options.shell_timeout_seconds));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<act::Clock::duration>(timeout);
    std::optional<ExitStatus> status;
    bool timed_out = false, cut = false;
    while (!(status = child.value().try_wait())) {
      child.value().read_output(keep);
      if (cancel.cancelled()) {
        cut = true;
        status = child.value().terminate(CANCELLED_SHELL_GRACE, keep).status;
        break;
      }
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
    bool ok = !timed_out && !cut && status && status->success();
    details["exit"] = status ? status->describe() : std::string("unknown");
    count("shell", ok, cut);
    record(alert, "shell", ok,
           "shell '" + cmd + "' " +
               (ok ? "succeeded" : cut ? "cut at the action deadline" : timed_out ? "timed out" : "failed"),
           details);
  }

  void sentinel(const Alert& alert, const RuleAction& a) {
    // Both expansions are infallible outside the shell context.
    std::string path = expand_placeholders(param(a, "path"), alert, EscapeContext::path).value();
    std::string contents = expand_placeholders(param(a, "contents", alert.message), alert, EscapeContext::text).value();
    Json details;
    details["path"] = path;
    auto refuse = [&](const Error& e) {
      record(alert, "sentinel", false, "refused to write " + path + ": " + e.message, details);
    };
    auto where = confine_path(path, write_roots);
    if (!where.ok()) return refuse(where.error());
    if (Status s = check_output_outside_inputs(where.value(), options.inputs); !s.ok()) return refuse(s.error());
    std::error_code ec;
    fs::create_directories(where.value().parent_path(), ec);
    // Again, now that the folders exist: a symlink raced in on the way is caught by the physical check.
    where = confine_path(where.value(), write_roots);
    if (!where.ok()) return refuse(where.error());
    Status written = param(a, "append") == "true" ? append_no_follow(where.value(), contents + "\n")
                                                   : write_file_atomic(where.value(), contents + "\n");
    if (!written.ok()) {
      record(alert, "sentinel", false, "cannot write " + path + ": " + written.error().message, details);
      return;
    }
    record(alert, "sentinel", true, "wrote " + path, details);
  }
};

ActionDispatcher::ActionDispatcher(ActionOptions options) : state_(std::make_unique<State>(std::move(options))) {
  State& s = *state_;
  for (const auto& root : s.options.write_roots) s.write_roots.emplace_back(root);
  if (s.write_roots.empty()) {
    fs::path parent = fs::path(s.options.alerts_jsonl).parent_path();
    s.write_roots.push_back(parent.empty() ? fs::path(".") : parent);
  }
  for (auto [path, stream] : {std::pair{&s.options.alerts_jsonl, &s.jsonl}, std::pair{&s.options.alerts_txt, &s.txt}}) {
    if (path->empty()) continue;
    std::error_code ec;
    auto parent = fs::path(*path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    stream->open(*path, std::ios::out | std::ios::trunc);
  }
}

ActionDispatcher::~ActionDispatcher() { close(); }

void ActionDispatcher::close(const std::function<bool()>& give_up) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->closed) return;
    state_->closed = true;
  }
  // One deadline for both queues: they finish side by side, so the total wait is the deadline, not twice it.
  auto deadline = act::Clock::now() + std::chrono::duration_cast<act::Clock::duration>(
                                          std::chrono::duration<double>(std::max(state_->options.deadline_seconds, 0.0)));
  std::atomic<int> open_queues{2};
  auto closer = [&](act::ActionQueue& q) {
    return std::thread([&] {
      q.close(deadline);
      --open_queues;
    });
  };
  std::thread http = closer(state_->http_queue), shell = closer(state_->shell_queue);
  while (open_queues > 0) {
    if (give_up && give_up()) {
      state_->http_queue.cut();
      state_->shell_queue.cut();
      break;
    }
    std::this_thread::sleep_for(GIVE_UP_POLL);
  }
  http.join();
  shell.join();
}

void ActionDispatcher::drain() {
  auto until = act::Clock::now() + std::chrono::duration_cast<act::Clock::duration>(
                                       std::chrono::duration<double>(std::max(state_->options.deadline_seconds, 0.0)));
  state_->http_queue.drain(until);
  state_->shell_queue.drain(until);
}

bool ActionDispatcher::stop_requested() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stop_requested;
}

Json ActionDispatcher::records() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->records;
}

std::map<std::string, ActionDelivery> ActionDispatcher::delivery() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->delivery;
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
      std::string msg = expand_placeholders(param(a, "msg", "stopping the run: {metric} = {value:.4g} at step {step}"),
                                            alert, EscapeContext::text)
                            .value();
      if (!first) {
        s.record(alert, "stop", true, msg + " (a stop is already under way)", nullptr);
      } else if (!s.options.stop) {
        s.record(alert, "stop", false, msg + ": no trainer to stop (give --cmd or --pid)", nullptr);
      } else {
        auto done = s.options.stop(alert);
        s.record(alert, "stop", done.ok(), msg + ": " + (done.ok() ? done.value() : done.error().message), nullptr);
      }
    } else if (a.kind == "sentinel") {
      s.sentinel(alert, a);
    } else if (a.kind == "http") {
      s.enqueue(s.http_queue, "http", alert, [&s, alert, a](const act::Cancel& c) { s.http(alert, a, c); });
    } else if (a.kind == "shell") {
      if (!s.options.allow_shell) {
        s.record(alert, "shell", false, "shell actions are disabled; run with --allow-shell to enable them", nullptr);
        continue;
      }
      auto cmd = expand_placeholders(param(a, "cmd"), alert, EscapeContext::shell);
      if (!cmd.ok()) {
        s.record(alert, "shell", false, "refused to run '" + param(a, "cmd") + "': " + cmd.error().message, nullptr);
        continue;
      }
      s.enqueue(s.shell_queue, "shell", alert,
                [&s, alert, a, cmd = cmd.value()](const act::Cancel& c) { s.shell(alert, cmd, a, c); });
    }
  }
}

}  // namespace rldk
