// run_bisect: drive `git bisect` with the rldk predicate, and always leave the repository as it was found.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <poll.h>
#include <sstream>

#include "rldk/bisect.h"
#include "run_capture.h"

namespace rldk {
namespace {

constexpr std::chrono::seconds GIT_TIMEOUT{120};  // any single git command but the search itself

std::string chomp(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

struct Git {
  std::string dir;

  Result<sys::Captured> run(const std::string& args) const {
    sys::CaptureOptions capture;
    capture.timeout = GIT_TIMEOUT;
    capture.working_directory = dir;
    // Never open an editor or a pager, whatever the user's configuration says.
    capture.environment = {{"GIT_EDITOR", "true"}, {"GIT_PAGER", "cat"}, {"GIT_TERMINAL_PROMPT", "0"}};
    return sys::run_capture("git " + args, capture);
  }
  // The command's trimmed stdout, or an error carrying git's own message.
  Result<std::string> out(const std::string& args, const std::string& what) const {
    auto r = run(args);
    if (!r.ok()) return Error{ErrorCode::io, "cannot run git: " + r.error().message, dir};
    if (!r->status.success()) {
      return Error{ErrorCode::invalid_argument, what + (r->err.empty() ? "" : ": " + chomp(r->err)), dir};
    }
    return chomp(r->out);
  }
};

// Resets the bisect on every way out of run_bisect, errors included.
class BisectReset {
 public:
  explicit BisectReset(const Git& git) : git_(git) {}
  ~BisectReset() {
    if (armed_) git_.run("bisect reset");
  }
  BisectReset(const BisectReset&) = delete;
  BisectReset& operator=(const BisectReset&) = delete;
  void arm() { armed_ = true; }

 private:
  const Git& git_;
  bool armed_ = false;
};

std::string self_executable() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "rldk";
}

std::string predicate_command(const BisectOptions& options) {
  const PredicateOptions& p = options.predicate;
  std::string binary = options.predicate_binary.empty() ? self_executable() : options.predicate_binary;
  std::string cmd = sys::shell_quote(binary) + " bisect --predicate --cmd " + sys::shell_quote(p.command) +
                    " --metric " + sys::shell_quote(p.metric) + " --cmp " +
                    sys::shell_quote(p.comparison.describe()) + " --window " + std::to_string(p.window) +
                    " --timeout " + std::to_string(p.timeout.count());
  if (!p.metrics_path.empty()) cmd += " --metrics-path " + sys::shell_quote(p.metrics_path);
  if (!options.log_path.empty()) cmd += " --log " + sys::shell_quote(options.log_path);
  return cmd;
}

// Runs `git bisect run` in the foreground of this process: its output is copied to stderr as progress and kept,
// and SIGINT/SIGTERM stop it (the child runs in its own process group, so Ctrl-C reaches only rldk).
Result<sys::Captured> bisect_run(const Git& git, const std::string& predicate) {
  SpawnOptions spawn;
  spawn.working_directory = git.dir;
  spawn.environment = {{"GIT_EDITOR", "true"}, {"GIT_PAGER", "cat"}};
  spawn.stop.grace = std::chrono::milliseconds{5'000};
  auto child = ChildProcess::spawn("git bisect run " + predicate, spawn);
  if (!child.ok()) return child.error();
  auto forwarder = SignalForwarder::install(child->pid());
  sys::Captured captured;
  auto on_output = [&](OutputStream stream, std::string_view bytes) {
    (stream == OutputStream::out ? captured.out : captured.err).append(bytes);
    std::fwrite(bytes.data(), 1, bytes.size(), stderr);
  };
  bool exited = false;
  while (!(exited && !child->output_open())) {
    while (child->read_output(on_output).more) {
    }
    if (!exited && child->try_wait()) exited = true;
    if (forwarder.ok() && !forwarder.value()->take().empty()) {
      // The signal already reached git's group; make sure the whole search stops before the reset.
      child->terminate(on_output);
      captured.interrupted = true;
      break;
    }
    std::vector<pollfd> fds = {{child->stdout_fd(), POLLIN, 0}, {child->stderr_fd(), POLLIN, 0}};
    if (forwarder.ok()) fds.push_back({forwarder.value()->poll_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), 100);
    if (exited && child->output_open()) {
      child->read_output(on_output);
      break;
    }
  }
  if (child->status()) captured.status = *child->status();
  return captured;
}

void log_line(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  std::ofstream log(path, std::ios::app);
  log << text << "\n";
}

}  // namespace

Result<BisectResult> run_bisect(const BisectOptions& options) {
  Git git{options.repo_dir.empty() ? "." : options.repo_dir};
  auto top = git.out("rev-parse --show-toplevel", "not a git repository");
  if (!top.ok()) return top.error();
  git.dir = top.value();
  auto dirty = git.out("status --porcelain --untracked-files=no", "cannot read the working tree's status");
  if (!dirty.ok()) return dirty.error();
  if (!dirty->empty()) {
    return Error{ErrorCode::invalid_argument,
                 "the working tree has uncommitted changes to tracked files; commit or stash them first (bisect "
                 "checks out other commits)",
                 git.dir};
  }
  auto bisect_log = git.out("rev-parse --git-path BISECT_LOG", "cannot locate the git directory");
  if (!bisect_log.ok()) return bisect_log.error();
  std::string log_in_repo = bisect_log->front() == '/' ? bisect_log.value() : git.dir + "/" + bisect_log.value();
  if (::access(log_in_repo.c_str(), F_OK) == 0) {
    return Error{ErrorCode::invalid_argument,
                 "a git bisect is already in progress here; finish it or run `git bisect reset` first", git.dir};
  }
  auto good = git.out("rev-parse --verify --quiet " + sys::shell_quote(options.good + "^{commit}"),
                      "--good: unknown revision '" + options.good + "'");
  if (!good.ok()) return good.error();
  auto bad = git.out("rev-parse --verify --quiet " + sys::shell_quote(options.bad + "^{commit}"),
                     "--bad: unknown revision '" + options.bad + "'");
  if (!bad.ok()) return bad.error();
  if (good.value() == bad.value()) {
    return Error{ErrorCode::invalid_argument, "--good and --bad name the same commit", git.dir};
  }
  auto ancestor = git.run("merge-base --is-ancestor " + good.value() + " " + bad.value());
  if (!ancestor.ok() || !ancestor->status.success()) {
    return Error{ErrorCode::invalid_argument,
                 "--good " + options.good + " is not an ancestor of --bad " + options.bad + "", git.dir};
  }

  BisectResult result;
  result.log_path = options.log_path;
  log_line(options.log_path, "rldk bisect in " + git.dir + ": good " + good.value() + ", bad " + bad.value() +
                                 ", metric " + options.predicate.metric + " " +
                                 options.predicate.comparison.describe() + " over the last " +
                                 std::to_string(options.predicate.window) + " points; command: " +
                                 options.predicate.command);
  BisectReset reset(git);
  reset.arm();  // from here on, whatever happens, the repository goes back to where it was
  auto start = git.out("bisect start " + bad.value() + " " + good.value(), "git bisect start failed");
  if (!start.ok()) return start.error();
  auto ran = bisect_run(git, predicate_command(options));
  if (!ran.ok()) return Error{ErrorCode::io, "cannot run git bisect: " + ran.error().message, git.dir};
  result.git_output = ran->out + ran->err;
  if (auto log = git.run("bisect log"); log.ok()) log_line(options.log_path, "git bisect log:\n" + chomp(log->out));
  log_line(options.log_path, "git bisect run output:\n" + chomp(result.git_output));

  std::istringstream lines(result.git_output);
  std::string line;
  bool listing_candidates = false;
  while (std::getline(lines, line)) {
    if (line.rfind("running ", 0) == 0) ++result.commits_tested;
    size_t at = line.find(" is the first bad commit");
    if (at != std::string::npos && at >= 40) {
      result.found = true;
      result.first_bad_commit = line.substr(at - 40, 40);
    }
    if (line.find("only 'skip'ped commits left") != std::string::npos) listing_candidates = true;
    if (listing_candidates && line.size() >= 40 && line.find_first_not_of("0123456789abcdef") >= 40) {
      result.candidates.push_back(line.substr(0, 40));
    }
  }
  if (ran->interrupted) {
    result.found = false;
    result.message = "interrupted; the repository was reset";
  } else if (result.found) {
    auto subject = git.out("show -s --format=%s " + result.first_bad_commit, "cannot read the commit");
    if (subject.ok()) result.subject = subject.value();
    result.message = "first bad commit " + result.first_bad_commit.substr(0, 12) + ": " + result.subject;
  } else if (!result.candidates.empty()) {
    result.message = "the command failed to produce the metric at every candidate; the first bad commit is one of " +
                     std::to_string(result.candidates.size());
  } else {
    result.message = "git bisect run did not name a first bad commit (" + ran->status.describe() + ")";
  }
  log_line(options.log_path, "result: " + result.message);
  return result;
}

Json bisect_result_json(const BisectResult& result, const BisectOptions& options) {
  Json j;
  j["schema"] = "rldk.bisect/v1";
  j["found"] = result.found;
  j["first_bad_commit"] = result.found ? Json(result.first_bad_commit) : Json(nullptr);
  j["subject"] = result.subject;
  Json candidates = Json::Array{};
  for (const auto& c : result.candidates) candidates.push_back(c);
  j["candidates"] = candidates;
  j["commits_tested"] = static_cast<uint64_t>(result.commits_tested);
  j["message"] = result.message;
  j["log_path"] = result.log_path;
  j["good"] = options.good;
  j["bad"] = options.bad;
  j["metric"] = options.predicate.metric;
  j["comparison"] = options.predicate.comparison.describe();
  j["window"] = static_cast<uint64_t>(options.predicate.window);
  return j;
}

}  // namespace rldk
