// Environment audit: is this training setup able to reproduce a run? It inspects the real target — the Python
// interpreter the trainer runs under (through a subprocess probe: versions, torch determinism flags, threads, a
// lock of installed packages), the environment variables that change numerics or data order, and the
// repository's Python code (how it seeds, whether it turns deterministic algorithms on, how DataLoaders shuffle) —
// and turns what it finds into checks with a status, file:line evidence and a fix.
//
// `rldk env-audit`, `rldk doctor` and `rldk check-determinism` render the same EnvAudit (JSON schema
// "rldk.env-audit/v1", docs/schemas/rldk.env-audit.v1.schema.json, and Markdown).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk {

// Ordered by severity: the overall status of an audit is its worst check.
enum class CheckStatus { skip, pass, warn, fail };
std::string_view check_status_name(CheckStatus status);  // "skip", "pass", "warn", "fail"

struct EnvAuditOptions {
  // Repository whose Python code is scanned; empty: no code scan.
  std::string repo_dir;
  // Interpreter to probe. Empty: $VIRTUAL_ENV/bin/python when set, else python3 on PATH. A named interpreter that
  // does not run is a fail check; an interpreter that cannot be found at all is a skip.
  std::string python;
  bool probe_python = true;
  // Ask the probe for the installed packages (the lock) too.
  bool include_packages = true;
  std::chrono::milliseconds probe_timeout{60'000};
  // Environment used instead of this process's own (tests, or auditing a job's recorded environment). The probe
  // runs with these variables added to this process's environment.
  std::optional<std::map<std::string, std::string>> environment;
  // Code scan limits: larger files are skipped (generated or vendored code), and the scan stops after max_files.
  size_t max_file_bytes = size_t{2} << 20;
  size_t max_files = 20'000;
};

// What the probe reported about the interpreter. Unknown values are empty / absent.
struct PythonEnvironment {
  bool probed = false;      // the probe ran and reported
  std::string interpreter;  // as given or resolved
  std::string error;        // why there is no report (not found, crashed, timed out); empty when probed
  std::string python_version;
  std::string executable;
  std::string platform;
  // Versions of the libraries that decide numerics: torch, cuda, cudnn, numpy, transformers, trl, accelerate,
  // deepspeed, vllm ... (only those importable).
  std::map<std::string, std::string> versions;
  // Import errors of libraries that are installed but fail to import (name -> message).
  std::map<std::string, std::string> import_errors;
  // torch settings at import, as the probe saw them: deterministic_algorithms, deterministic_warn_only,
  // cudnn_deterministic, cudnn_benchmark, cuda_matmul_allow_tf32, cudnn_allow_tf32, float32_matmul_precision,
  // cuda_available, cuda_device_count, num_threads, num_interop_threads, fill_uninitialized_memory.
  std::map<std::string, std::string> torch;
  std::vector<std::string> devices;   // CUDA device names with their compute capability
  std::vector<std::string> packages;  // "name==version", sorted by name (the lock)
  std::string packages_digest;        // short stable hash of the lock, to compare two environments at a glance
};

// One place in the repository's code that matters for reproducibility.
struct CodeEvidence {
  std::string kind;      // e.g. "torch_manual_seed", "cudnn_benchmark_true", "dataloader_shuffle_no_generator"
  std::string location;  // path relative to repo_dir, ":" line
  std::string snippet;   // the source line, trimmed
};

struct CodeScan {
  std::string repo_dir;
  size_t files_scanned = 0;
  size_t files_skipped = 0;  // too large, unreadable, or past max_files
  bool truncated = false;    // max_files reached
  std::vector<std::string> skipped;  // "path: why" for the first files not scanned (a skipped file is never silent)
  std::vector<CodeEvidence> evidence;  // in file order, then line order
  std::vector<std::string> imports;    // libraries the code imports (random, numpy, torch, ...), sorted
};

struct EnvCheck {
  std::string id;        // stable, e.g. "code.seeding"; documented in docs/reproducibility.md
  std::string category;  // "python", "environment", "code"
  CheckStatus status = CheckStatus::pass;
  std::string summary;   // one line for a person
  std::vector<std::string> evidence;  // "path:line: snippet", "VAR=value", probe values
  std::string fix;       // what to change; empty when nothing to do
};

struct EnvAudit {
  std::string repo_dir;
  PythonEnvironment python;
  std::map<std::string, std::string> environment;  // the relevant variables that are set
  std::optional<CodeScan> code;                    // absent without repo_dir
  std::vector<EnvCheck> checks;

  CheckStatus status() const;  // the worst check; pass when there are none
  size_t count(CheckStatus status) const;
};

// Runs the probe, reads the environment, scans the code and evaluates the checks.
// Errors: not_found / unreadable when repo_dir is given but is not a readable directory. Everything about the
// Python side is reported as checks, never as an error.
Result<EnvAudit> run_env_audit(const EnvAuditOptions& options);

// The parts, for callers that need only one (and for tests).
PythonEnvironment probe_python_environment(const EnvAuditOptions& options);
// The variables that change numerics, data order or parallelism, from `environment` or this process.
std::map<std::string, std::string> relevant_environment(
    const std::optional<std::map<std::string, std::string>>& environment = std::nullopt);
Result<CodeScan> scan_repository_code(const std::string& repo_dir, const EnvAuditOptions& options = {});
// Scans one file's text; `path` only labels the evidence.
void scan_python_source(std::string_view path, std::string_view text, CodeScan& scan);
std::vector<EnvCheck> evaluate_env_checks(const PythonEnvironment& python,
                                          const std::map<std::string, std::string>& environment,
                                          const CodeScan* code, bool python_was_named);

// Renderings: JSON (schema "rldk.env-audit/v1", sorted keys, no timestamps) and Markdown (a table of checks, then
// the evidence and fixes of every check that is not a pass).
Json env_audit_json(const EnvAudit& audit);
std::string env_audit_markdown(const EnvAudit& audit);

}  // namespace rldk
