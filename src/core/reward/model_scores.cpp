// score_with_reward_model(): see rldk/reward_model_scores.h. The model is run by `python -m rldk.reward_models`
// (torch and transformers have no C++ front end worth binding for this), started with an argument vector.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string_view>

#include "rldk/reward_model_scores.h"
#include "sys/run_capture.h"

namespace rldk {
namespace {

// Scoring a large file with a large model on a CPU takes hours; the limit only stops a scorer that hangs forever.
constexpr std::chrono::hours SCORING_TIMEOUT{72};
constexpr size_t MAX_MESSAGE_CHARS = 500;

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable(const std::string& path) { return is_file(path) && ::access(path.c_str(), X_OK) == 0; }

std::string folder_of_self() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  std::string exe(buffer, static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string_view rest(path);
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

// The scorer's reason: the last non-empty line of its stderr (it prints "error: ..." last; a Python traceback ends
// with the exception line), cut to a readable length.
std::string last_line(const std::string& err) {
  size_t end = err.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = err.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::string line = err.substr(begin, end + 1 - begin);
  if (line.rfind("error: ", 0) == 0) line.erase(0, 7);
  if (line.size() > MAX_MESSAGE_CHARS) line = line.substr(0, MAX_MESSAGE_CHARS) + "...";
  return line;
}

}  // namespace

bool is_reward_model_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && is_file(path + "/config.json");
}

std::string find_scoring_python() {
  if (const char* chosen = std::getenv("RLDK_PYTHON"); chosen != nullptr && *chosen != '\0') return chosen;
  std::string beside = folder_of_self();
  if (!beside.empty() && is_executable(beside + "/python3")) return beside + "/python3";
  return on_path("python3");
}

Status score_with_reward_model(const std::string& model_dir, const std::string& samples, const std::string& out,
                               const RewardModelScoreOptions& options) {
  std::string python = options.python.empty() ? find_scoring_python() : options.python;
  if (python.empty()) {
    return Error{ErrorCode::invalid_argument,
                 "no Python to run the reward model: install python3 with torch, transformers and the rldk package, "
                 "or set RLDK_PYTHON to such an interpreter",
                 model_dir};
  }
  std::vector<std::string> argv = {python, "-m", "rldk.reward_models", model_dir, samples, "--out", out,
                                   "--batch-size", std::to_string(options.batch_size),
                                   "--max-length", std::to_string(options.max_length), "--dtype", options.dtype};
  if (!options.device.empty()) argv.insert(argv.end(), {"--device", options.device});
  if (!options.prompt_col.empty()) argv.insert(argv.end(), {"--prompt-col", options.prompt_col});
  if (!options.response_col.empty()) argv.insert(argv.end(), {"--response-col", options.response_col});
  sys::CaptureOptions capture;
  capture.timeout = SCORING_TIMEOUT;
  capture.forward_signals = true;  // Ctrl-C stops the scorer too
  // Local files only, and no module shadowed from the working directory (PYTHONSAFEPATH, Python 3.11+).
  capture.environment = {{"HF_HUB_OFFLINE", "1"},        {"TRANSFORMERS_OFFLINE", "1"},
                         {"TRANSFORMERS_VERBOSITY", "error"}, {"TOKENIZERS_PARALLELISM", "false"},
                         {"PYTHONSAFEPATH", "1"}};
  auto run = sys::run_capture(argv, capture);
  if (!run.ok()) {
    return Error{ErrorCode::invalid_argument,
                 "cannot run " + python + " (" + run.error().message +
                     "); set RLDK_PYTHON to a Python with torch, transformers and the rldk package",
                 model_dir};
  }
  const sys::Captured& c = run.value();
  if (c.interrupted) return Error{ErrorCode::invalid_argument, "scoring interrupted", model_dir};
  if (c.timed_out) return Error{ErrorCode::invalid_argument, "scoring timed out", model_dir};
  if (c.status.success()) return Ok{};
  std::string reason = last_line(c.err);
  if (reason.find("No module named 'rldk") != std::string::npos) {
    reason = python + " cannot import rldk.reward_models: install the rldk Python package (with torch and "
             "transformers) into it, or set RLDK_PYTHON to a Python that has them";
  } else if (reason.empty()) {
    reason = "the reward-model scorer (" + python + " -m rldk.reward_models) failed: " + c.status.describe();
  }
  return Error{ErrorCode::invalid_argument, reason, model_dir};
}

}  // namespace rldk
