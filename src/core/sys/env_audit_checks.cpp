// The env audit's verdicts: turn the probe, the environment and the code scan into checks with evidence and a fix.
// Every check id is documented in docs/reproducibility.md; "skip" means the check does not apply (no torch, no
// CUDA, no code to scan), never that something went wrong.
#include <algorithm>
#include <set>

#include "rldk/env_audit.h"

namespace rldk {
namespace {

constexpr size_t MAX_EVIDENCE = 12;  // per check; the rest is counted, the JSON code section keeps everything

std::string get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

bool is_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Evidence {
  const CodeScan* scan;

  std::vector<const CodeEvidence*> of(const std::vector<std::string>& kinds) const {
    std::vector<const CodeEvidence*> found;
    if (scan == nullptr) return found;
    for (const auto& e : scan->evidence) {
      for (const auto& k : kinds) {
        if (e.kind == k) found.push_back(&e);
      }
    }
    return found;
  }
  bool any(const std::vector<std::string>& kinds) const { return !of(kinds).empty(); }
  bool imports(const char* module) const {
    return scan != nullptr && std::find(scan->imports.begin(), scan->imports.end(), module) != scan->imports.end();
  }
};

// One line per place: a call with two problems (shuffle and workers) is listed once.
void add_evidence(EnvCheck& check, const std::vector<const CodeEvidence*>& found) {
  size_t listed = 0;
  size_t more = 0;
  for (const auto* e : found) {
    std::string line = e->location + ": " + e->snippet;
    if (std::find(check.evidence.begin(), check.evidence.end(), line) != check.evidence.end()) continue;
    if (listed == MAX_EVIDENCE) {
      ++more;
      continue;
    }
    check.evidence.push_back(std::move(line));
    ++listed;
  }
  if (more > 0) check.evidence.push_back("... and " + std::to_string(more) + " more");
}

EnvCheck make(const char* id, const char* category, CheckStatus status, std::string summary, std::string fix = "") {
  EnvCheck c;
  c.id = id;
  c.category = category;
  c.status = status;
  c.summary = std::move(summary);
  c.fix = std::move(fix);
  return c;
}

// ---- python ----

EnvCheck check_interpreter(const PythonEnvironment& py, bool named) {
  if (py.probed) {
    EnvCheck c = make("python.interpreter", "python", CheckStatus::pass, "Python " + py.python_version + " probed");
    c.evidence.push_back("executable: " + py.executable);
    if (!py.platform.empty()) c.evidence.push_back("platform: " + py.platform);
    return c;
  }
  if (py.interpreter.empty() && py.error.empty()) {
    return make("python.interpreter", "python", CheckStatus::skip, "the Python environment was not probed");
  }
  // Not finding any Python is a property of the machine the audit runs on; a named one that fails is a broken
  // target.
  bool found = !py.interpreter.empty() && py.error.find("no Python interpreter found") == std::string::npos;
  CheckStatus status = named || found ? CheckStatus::fail : CheckStatus::skip;
  EnvCheck c = make("python.interpreter", "python", status, "the Python environment could not be probed",
                    "Point --python at the interpreter the trainer runs under (e.g. .venv/bin/python).");
  if (!py.error.empty()) c.evidence.push_back(py.error);
  return c;
}

EnvCheck check_torch(const PythonEnvironment& py) {
  if (!py.probed) return make("python.torch", "python", CheckStatus::skip, "no probe report");
  if (auto err = py.import_errors.find("torch"); err != py.import_errors.end()) {
    EnvCheck c = make("python.torch", "python", CheckStatus::fail, "torch is installed but does not import",
                      "Fix the installation (a CUDA/driver mismatch or a missing shared library is typical).");
    c.evidence.push_back(err->second);
    return c;
  }
  if (py.torch.empty()) return make("python.torch", "python", CheckStatus::skip, "torch is not installed");
  EnvCheck c = make("python.torch", "python", CheckStatus::pass, "torch " + get(py.versions, "torch"));
  for (const char* lib : {"cuda", "cudnn", "numpy", "transformers", "trl", "accelerate", "deepspeed", "vllm"}) {
    std::string v = get(py.versions, lib);
    if (!v.empty()) c.evidence.push_back(std::string(lib) + " " + v);
  }
  for (const auto& [k, v] : py.torch) c.evidence.push_back(k + " = " + v);
  for (const auto& d : py.devices) c.evidence.push_back("device: " + d);
  // At import every flag has its default; a flag already changed means something at interpreter start-up
  // (sitecustomize, a .pth hook) changes numerics for every script.
  if (get(py.torch, "cudnn_benchmark") == "True") {
    c.status = CheckStatus::warn;
    c.summary += "; cudnn.benchmark is already on at import";
    c.fix = "Find what turns torch.backends.cudnn.benchmark on at start-up (sitecustomize.py, a .pth file).";
  }
  return c;
}

EnvCheck check_tf32(const PythonEnvironment& py) {
  if (!py.probed || get(py.torch, "cuda_available") != "True") {
    return make("python.tf32", "python", CheckStatus::skip, "no CUDA device visible to the probe");
  }
  std::string matmul = get(py.torch, "cuda_matmul_allow_tf32");
  std::string precision = get(py.torch, "float32_matmul_precision");
  if (matmul == "True" || (!precision.empty() && precision != "highest")) {
    EnvCheck c = make("python.tf32", "python", CheckStatus::warn,
                      "float32 matmuls run in TF32: repeatable on one GPU model, different on another",
                      "torch.set_float32_matmul_precision('highest') when runs must match across GPU generations.");
    c.evidence.push_back("cuda.matmul.allow_tf32 = " + matmul);
    c.evidence.push_back("float32_matmul_precision = " + precision);
    return c;
  }
  return make("python.tf32", "python", CheckStatus::pass, "float32 matmuls use full precision");
}

EnvCheck check_lock(const PythonEnvironment& py) {
  if (!py.probed) return make("python.lock", "python", CheckStatus::skip, "no probe report");
  if (py.packages.empty()) {
    return make("python.lock", "python", CheckStatus::skip, "package list not requested or not available");
  }
  EnvCheck c = make("python.lock", "python", CheckStatus::pass,
                    std::to_string(py.packages.size()) + " packages locked (digest " + py.packages_digest + ")");
  c.evidence.push_back("compare the digest of two environments; `rldk env-audit --json` lists every package");
  return c;
}

// ---- environment ----

EnvCheck check_hashseed(const std::map<std::string, std::string>& env, const Evidence& code) {
  auto set_in_code = code.of({"sets_pythonhashseed"});
  std::string v = get(env, "PYTHONHASHSEED");
  if (is_integer(v)) {
    EnvCheck c = make("env.pythonhashseed", "environment", CheckStatus::pass, "PYTHONHASHSEED=" + v);
    return c;
  }
  const char* fix = "export PYTHONHASHSEED=0 in the launch script (it must be set before Python starts; setting "
                    "os.environ inside the script is too late for that process).";
  if (v == "random") {
    EnvCheck c = make("env.pythonhashseed", "environment", CheckStatus::fail,
                      "PYTHONHASHSEED=random: set and dict-of-str orders change every run", fix);
    c.evidence.push_back("PYTHONHASHSEED=random");
    return c;
  }
  EnvCheck c = make("env.pythonhashseed", "environment", CheckStatus::warn,
                    v.empty() ? "PYTHONHASHSEED is not set: iteration order of sets of strings changes every run"
                              : "PYTHONHASHSEED has an invalid value",
                    fix);
  if (!v.empty()) c.evidence.push_back("PYTHONHASHSEED=" + v);
  add_evidence(c, set_in_code);
  return c;
}

EnvCheck check_cublas(const PythonEnvironment& py, const std::map<std::string, std::string>& env,
                      const Evidence& code) {
  if (!py.probed || get(py.torch, "cuda_available") != "True") {
    return make("env.cublas_workspace", "environment", CheckStatus::skip, "no CUDA device visible to the probe");
  }
  std::string v = get(env, "CUBLAS_WORKSPACE_CONFIG");
  const char* fix = "export CUBLAS_WORKSPACE_CONFIG=:4096:8 (or :16:8) before the process initializes CUDA.";
  if (v == ":4096:8" || v == ":16:8") {
    return make("env.cublas_workspace", "environment", CheckStatus::pass, "CUBLAS_WORKSPACE_CONFIG=" + v);
  }
  if (!v.empty()) {
    EnvCheck c = make("env.cublas_workspace", "environment", CheckStatus::fail,
                      "CUBLAS_WORKSPACE_CONFIG has a value cuBLAS does not make deterministic", fix);
    c.evidence.push_back("CUBLAS_WORKSPACE_CONFIG=" + v);
    return c;
  }
  auto in_code = code.of({"sets_cublas_workspace"});
  if (!in_code.empty()) {
    EnvCheck c = make("env.cublas_workspace", "environment", CheckStatus::pass,
                      "CUBLAS_WORKSPACE_CONFIG is set by the code (effective if before CUDA initializes)");
    add_evidence(c, in_code);
    return c;
  }
  bool deterministic = code.any({"deterministic_on"});
  EnvCheck c = make("env.cublas_workspace", "environment", deterministic ? CheckStatus::fail : CheckStatus::warn,
                    deterministic ? "use_deterministic_algorithms(True) without CUBLAS_WORKSPACE_CONFIG raises a "
                                    "RuntimeError at the first cuBLAS call"
                                  : "CUBLAS_WORKSPACE_CONFIG is not set: cuBLAS may pick non-deterministic "
                                    "reductions on CUDA",
                    fix);
  return c;
}

// ---- code ----

EnvCheck check_seeding(const Evidence& code) {
  bool helper = code.any({"global_seed_helper"});
  struct Need {
    const char* library;
    bool needed;
    std::vector<std::string> seeds;
    std::vector<std::string> uses;
  };
  std::vector<Need> needs = {
      {"torch", code.imports("torch"), {"torch_manual_seed"}, {}},
      {"numpy", code.any({"numpy_random_use"}), {"numpy_seed"}, {"numpy_random_use"}},
      {"random", code.any({"python_random_use"}), {"python_seed"}, {"python_random_use"}},
  };
  auto seeds = code.of({"global_seed_helper", "torch_manual_seed", "torch_cuda_seed", "numpy_seed", "python_seed"});
  std::vector<std::string> unseeded;
  std::vector<const CodeEvidence*> use_sites;
  bool any_needed = false;
  for (const auto& n : needs) {
    if (!n.needed) continue;
    any_needed = true;
    if (helper || code.any(n.seeds)) continue;
    unseeded.emplace_back(n.library);
    for (auto* e : code.of(n.uses)) use_sites.push_back(e);
  }
  if (!any_needed) {
    return make("code.seeding", "code", CheckStatus::skip, "the code uses no random-number library");
  }
  if (unseeded.empty()) {
    EnvCheck c = make("code.seeding", "code", CheckStatus::pass, "every random-number library in use is seeded");
    add_evidence(c, seeds);
    return c;
  }
  std::string list;
  for (const auto& u : unseeded) list += (list.empty() ? "" : ", ") + u;
  EnvCheck c = make("code.seeding", "code", CheckStatus::fail, "not seeded: " + list,
                    "Call rldk.seed.set_global_seed(seed) (or transformers.set_seed(seed)) once at start-up, before "
                    "models, data loaders or environments are built.");
  add_evidence(c, use_sites);
  add_evidence(c, seeds);
  return c;
}

EnvCheck check_entropy(const Evidence& code) {
  auto entropy = code.of({"entropy_seed"});
  auto urandom = code.of({"os_urandom"});
  if (entropy.empty() && urandom.empty()) {
    return make("code.entropy_seeds", "code", CheckStatus::pass, "no generator is seeded from the clock or the OS");
  }
  if (!entropy.empty()) {
    EnvCheck c = make("code.entropy_seeds", "code", CheckStatus::fail,
                      "a random-number generator is seeded from OS entropy or the clock: every run differs",
                      "Seed it from the run's seed (generator.manual_seed(seed), np.random.default_rng(seed), "
                      "random.Random(seed)), and log the seed.");
    add_evidence(c, entropy);
    add_evidence(c, urandom);
    return c;
  }
  EnvCheck c = make("code.entropy_seeds", "code", CheckStatus::warn,
                    "os.urandom values differ in every run; fine for ids and salts, not for anything numeric",
                    "Draw numeric randomness from a seeded generator instead.");
  add_evidence(c, urandom);
  return c;
}

EnvCheck check_deterministic_algorithms(const Evidence& code) {
  if (!code.imports("torch")) {
    return make("code.deterministic_algorithms", "code", CheckStatus::skip, "the code does not use torch");
  }
  auto on = code.of({"deterministic_on"});
  auto off = code.of({"deterministic_off"});
  const char* fix = "torch.use_deterministic_algorithms(True) at start-up (rldk.seed.set_global_seed does it), with "
                    "CUBLAS_WORKSPACE_CONFIG=:4096:8 exported on CUDA.";
  if (!on.empty()) {
    EnvCheck c = make("code.deterministic_algorithms", "code", CheckStatus::pass,
                      "deterministic algorithms are turned on");
    add_evidence(c, on);
    if (!off.empty()) {
      c.status = CheckStatus::warn;
      c.summary = "deterministic algorithms are turned on in one place and off in another";
      c.fix = "Keep one setting; the call that runs last wins.";
      add_evidence(c, off);
    }
    return c;
  }
  EnvCheck c = make("code.deterministic_algorithms", "code", CheckStatus::warn,
                    off.empty() ? "torch.use_deterministic_algorithms(True) is never called"
                                : "deterministic algorithms are turned off",
                    fix);
  add_evidence(c, off);
  return c;
}

EnvCheck check_cudnn(const Evidence& code) {
  if (!code.imports("torch")) return make("code.cudnn", "code", CheckStatus::skip, "the code does not use torch");
  auto benchmark = code.of({"cudnn_benchmark_true"});
  auto not_det = code.of({"cudnn_deterministic_false"});
  if (!benchmark.empty()) {
    EnvCheck c = make("code.cudnn", "code", CheckStatus::fail,
                      "cudnn.benchmark = True: cuDNN times candidate kernels and may pick a different one each run",
                      "Set torch.backends.cudnn.benchmark = False for runs that must reproduce.");
    add_evidence(c, benchmark);
    add_evidence(c, not_det);
    return c;
  }
  if (!not_det.empty()) {
    EnvCheck c = make("code.cudnn", "code", CheckStatus::warn, "cudnn.deterministic = False",
                      "Set torch.backends.cudnn.deterministic = True (or use_deterministic_algorithms(True)).");
    add_evidence(c, not_det);
    return c;
  }
  EnvCheck c = make("code.cudnn", "code", CheckStatus::pass, "cudnn.benchmark is not turned on");
  add_evidence(c, code.of({"cudnn_benchmark_false", "cudnn_deterministic_true"}));
  return c;
}

EnvCheck check_dataloaders(const Evidence& code) {
  auto unseeded = code.of({"dataloader_shuffle_no_generator"});
  auto workers = code.of({"dataloader_workers_no_seed"});
  auto seeded = code.of({"dataloader_shuffle_generator"});
  if (unseeded.empty() && workers.empty()) {
    if (seeded.empty()) return make("code.dataloader", "code", CheckStatus::skip, "no shuffling DataLoader found");
    EnvCheck c = make("code.dataloader", "code", CheckStatus::pass, "shuffling DataLoaders get their own generator");
    add_evidence(c, seeded);
    return c;
  }
  bool torch_seeded = code.any({"torch_manual_seed", "global_seed_helper"});
  // Without a generator the sampler draws its seed from torch's global generator: reproducible only when that
  // is seeded and exactly the same draws happen before every epoch, which any added random op breaks.
  EnvCheck c = make("code.dataloader", "code", torch_seeded ? CheckStatus::warn : CheckStatus::fail,
                    torch_seeded ? "DataLoader order depends on the global torch RNG stream"
                                 : "DataLoader shuffle order is not seeded",
                    "Pass generator=torch.Generator().manual_seed(seed) to every shuffling DataLoader, and "
                    "worker_init_fn seeding numpy/random from torch.initial_seed() when num_workers > 0.");
  add_evidence(c, unseeded);
  add_evidence(c, workers);
  return c;
}

}  // namespace

std::vector<EnvCheck> evaluate_env_checks(const PythonEnvironment& python,
                                          const std::map<std::string, std::string>& environment,
                                          const CodeScan* code, bool python_was_named) {
  Evidence evidence{code};
  std::vector<EnvCheck> checks;
  checks.push_back(check_interpreter(python, python_was_named));
  checks.push_back(check_torch(python));
  checks.push_back(check_tf32(python));
  checks.push_back(check_lock(python));
  checks.push_back(check_hashseed(environment, evidence));
  checks.push_back(check_cublas(python, environment, evidence));
  if (code != nullptr) {
    checks.push_back(check_seeding(evidence));
    checks.push_back(check_entropy(evidence));
    checks.push_back(check_deterministic_algorithms(evidence));
    checks.push_back(check_cudnn(evidence));
    checks.push_back(check_dataloaders(evidence));
  }
  return checks;
}

}  // namespace rldk
