// The Python side of the env audit: run the target interpreter with a probe script and read its report.
//
// The probe writes one fact per line, fields separated by tabs, so reading it needs no JSON parser and a probe cut
// short (killed, crashed mid-import) still yields everything up to the crash; its last line "done" tells a
// complete report from a partial one. Library versions come from package metadata rather than imports (importing
// transformers or tensorflow costs seconds); only torch is imported, because its determinism flags exist only
// at run time.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "rldk/env_audit.h"
#include "run_capture.h"

namespace rldk {
namespace {

constexpr const char* PROBE_SCRIPT = R"PY(
import sys
def emit(*fields):
    sys.stdout.write("\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n")
import platform
emit("python_version", platform.python_version())
emit("executable", sys.executable)
emit("platform", platform.platform())
try:
    from importlib import metadata
except ImportError:
    metadata = None
LIBRARIES = ("torch", "numpy", "transformers", "trl", "accelerate", "deepspeed", "vllm", "datasets", "peft",
             "jax", "tensorflow", "flash-attn", "triton", "openrlhf", "verl")
if metadata is not None:
    for name in LIBRARIES:
        try:
            emit("version", name, metadata.version(name))
        except Exception:
            pass
    if WANT_PACKAGES:
        seen = set()
        for dist in metadata.distributions():
            try:
                name = dist.metadata["Name"]
            except Exception:
                name = None
            if name and name.lower() not in seen:
                seen.add(name.lower())
                emit("package", "%s==%s" % (name, dist.version))
try:
    import torch
except ImportError as e:
    if getattr(e, "name", None) != "torch":  # installed, but one of its own imports fails
        emit("import_error", "torch", e)
except Exception as e:
    emit("import_error", "torch", "%s: %s" % (type(e).__name__, e))
else:
    emit("version", "torch", torch.__version__)
    emit("version", "cuda", getattr(torch.version, "cuda", None) or "")
    def flag(key, read):
        try:
            emit("torch", key, read())
        except Exception as e:
            emit("torch_error", key, "%s: %s" % (type(e).__name__, e))
    flag("deterministic_algorithms", torch.are_deterministic_algorithms_enabled)
    flag("deterministic_warn_only", torch.is_deterministic_algorithms_warn_only_enabled)
    flag("cudnn_deterministic", lambda: torch.backends.cudnn.deterministic)
    flag("cudnn_benchmark", lambda: torch.backends.cudnn.benchmark)
    flag("cuda_matmul_allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32)
    flag("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32)
    flag("float32_matmul_precision", torch.get_float32_matmul_precision)
    flag("num_threads", torch.get_num_threads)
    flag("num_interop_threads", torch.get_num_interop_threads)
    flag("fill_uninitialized_memory", lambda: torch.utils.deterministic.fill_uninitialized_memory)
    flag("cuda_available", torch.cuda.is_available)
    try:
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        if cudnn:
            emit("version", "cudnn", cudnn)
    except Exception:
        pass
    try:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        emit("torch", "cuda_device_count", count)
        for i in range(count):
            major, minor = torch.cuda.get_device_capability(i)
            emit("device", "%s (sm_%d%d)" % (torch.cuda.get_device_name(i), major, minor))
    except Exception as e:
        emit("torch_error", "cuda_devices", "%s: %s" % (type(e).__name__, e))
emit("done")
)PY";

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string search_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return "";
}

// The interpreter to probe, or empty with `why` filled in.
std::string resolve_interpreter(const std::string& named, std::string& why) {
  if (!named.empty()) {
    if (named.find('/') != std::string::npos) {
      if (is_executable_file(named)) return named;
      why = "interpreter " + named + " does not exist or is not executable";
      return "";
    }
    std::string found = search_path(named);
    if (found.empty()) why = "interpreter " + named + " is not on PATH";
    return found;
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    std::string candidate = std::string(venv) + "/bin/python";
    if (is_executable_file(candidate)) return candidate;
  }
  std::string found = search_path("python3");
  if (found.empty()) why = "no Python interpreter found ($VIRTUAL_ENV unset, no python3 on PATH)";
  return found;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t begin = 0;
  while (true) {
    size_t tab = line.find('\t', begin);
    fields.push_back(line.substr(begin, tab == std::string::npos ? std::string::npos : tab - begin));
    if (tab == std::string::npos) break;
    begin = tab + 1;
  }
  return fields;
}

// Short, stable digest of the lock (FNV-1a 64 over the sorted lines): equal locks give equal digests.
std::string lock_digest(const std::vector<std::string>& packages) {
  uint64_t hash = 14695981039346656037ULL;
  for (const auto& p : packages) {
    for (char c : p + "\n") {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

void read_report(const std::string& out, PythonEnvironment& env, bool& done) {
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto f = split_tabs(line);
    const std::string& key = f[0];
    if (key == "done") {
      done = true;
    } else if (key == "python_version" && f.size() >= 2) {
      env.python_version = f[1];
    } else if (key == "executable" && f.size() >= 2) {
      env.executable = f[1];
    } else if (key == "platform" && f.size() >= 2) {
      env.platform = f[1];
    } else if (key == "version" && f.size() >= 3) {
      env.versions[f[1]] = f[2];
    } else if ((key == "torch" || key == "torch_error") && f.size() >= 3) {
      env.torch[key == "torch" ? f[1] : f[1] + "_error"] = f[2];
    } else if (key == "import_error" && f.size() >= 3) {
      env.import_errors[f[1]] = f[2];
    } else if (key == "device" && f.size() >= 2) {
      env.devices.push_back(f[1]);
    } else if (key == "package" && f.size() >= 2) {
      env.packages.push_back(f[1]);
    }
  }
}

bool less_ignoring_case(const std::string& a, const std::string& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int ca = std::tolower(static_cast<unsigned char>(a[i]));
    int cb = std::tolower(static_cast<unsigned char>(b[i]));
    if (ca != cb) return ca < cb;
  }
  return a.size() < b.size();
}

}  // namespace

PythonEnvironment probe_python_environment(const EnvAuditOptions& options) {
  PythonEnvironment env;
  std::string why;
  env.interpreter = resolve_interpreter(options.python, why);
  if (env.interpreter.empty()) {
    env.interpreter = options.python;
    env.error = why;
    return env;
  }
  std::string script = std::string("WANT_PACKAGES = ") + (options.include_packages ? "True" : "False") + PROBE_SCRIPT;
  sys::CaptureOptions capture;
  capture.timeout = options.probe_timeout;
  if (options.environment) {
    for (const auto& [k, v] : *options.environment) capture.environment.emplace_back(k, v);
  }
  auto ran = sys::run_capture(sys::shell_quote(env.interpreter) + " -c " + sys::shell_quote(script), capture);
  if (!ran.ok()) {
    env.error = "could not run " + env.interpreter + ": " + ran.error().message;
    return env;
  }
  bool done = false;
  read_report(ran->out, env, done);
  std::sort(env.packages.begin(), env.packages.end(), less_ignoring_case);
  if (!env.packages.empty()) env.packages_digest = lock_digest(env.packages);
  if (ran->timed_out) {
    env.error = "the probe did not finish within " + std::to_string(options.probe_timeout.count() / 1000) +
                " s (a slow or hanging import); its partial report is kept";
  } else if (!done) {
    std::string last_err = ran->err.size() > 400 ? ran->err.substr(ran->err.size() - 400) : ran->err;
    while (!last_err.empty() && (last_err.back() == '\n' || last_err.back() == ' ')) last_err.pop_back();
    env.error = "the probe failed (" + ran->status.describe() + ")" + (last_err.empty() ? "" : ": " + last_err);
  }
  env.probed = done;
  return env;
}

}  // namespace rldk
