// rldk env-audit [DIR]: can this setup reproduce a run? Probes the Python environment, reads the environment
// variables, scans DIR's Python code for seeding and determinism settings.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.h"
#include "report_output.h"
#include "rldk/env_audit.h"

namespace rldk::cli {
namespace {

struct EnvAuditCliOptions {
  std::string dir = ".";
  std::string python;
  bool json = false;
  std::string out_dir;
  bool strict = false;
  bool probe = true;
  bool packages = true;
  std::string env_file;
  double probe_timeout_s = 60.0;
};

// KEY=VALUE lines (as `env` or `export -p` print them, or a .env file); blank lines and # comments are skipped.
// A malformed line is reported with its location and skipped.
bool read_env_file(const std::string& path, std::map<std::string, std::string>& env) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "rldk env-audit: %s: cannot read the environment file\n", path.c_str());
    return false;
  }
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    for (const char* prefix : {"export ", "declare -x "}) {
      if (line.rfind(prefix, 0) == 0) line = line.substr(std::strlen(prefix));
    }
    size_t eq = line.find('=');
    if (eq == 0 || eq == std::string::npos) {
      std::fprintf(stderr, "rldk env-audit: %s:%zu: not a KEY=VALUE line, skipped\n", path.c_str(), number);
      continue;
    }
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    env[line.substr(0, eq)] = value;
  }
  return true;
}

int run_env_audit_command(const EnvAuditCliOptions& opts) {
  EnvAuditOptions options;
  options.repo_dir = opts.dir;
  options.python = opts.python;
  options.probe_python = opts.probe;
  options.include_packages = opts.packages;
  options.probe_timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.probe_timeout_s * 1000));
  if (!opts.env_file.empty()) {
    std::map<std::string, std::string> env;
    if (!read_env_file(opts.env_file, env)) return EXIT_INPUT_ERROR;
    options.environment = std::move(env);
  }
  auto audit = run_env_audit(options);
  if (!audit.ok()) {
    std::fprintf(stderr, "rldk env-audit: %s\n", to_string(audit.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  std::string json = env_audit_json(audit.value()).dump();
  std::string markdown = env_audit_markdown(audit.value());
  if (!opts.out_dir.empty()) {
    if (!write_report_folder("rldk env-audit", opts.out_dir, {opts.env_file},
                             {{"env_audit.json", json}, {"env_audit.md", markdown}})) {
      return EXIT_INPUT_ERROR;
    }
  }
  print_text(stdout, opts.json ? json : markdown);
  CheckStatus status = audit->status();
  bool failed = status == CheckStatus::fail || (opts.strict && status == CheckStatus::warn);
  return failed ? EXIT_FINDINGS : EXIT_OK;
}

}  // namespace

void add_env_audit_command(CLI::App& app, int& exit_code) { add_env_audit_subcommand(app, exit_code, false); }

void add_env_audit_subcommand(CLI::App& parent, int& exit_code, bool alias) {
  auto opts = std::make_shared<EnvAuditCliOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "env-audit",
      alias ? "Same as `rldk env-audit`." : "Check whether a training setup can reproduce a run: probes the Python environment (torch/CUDA versions, "
      "determinism flags, installed packages), reads the environment variables that change numerics, and scans "
      "the repository's Python code for seeding, deterministic algorithms, cudnn.benchmark and unseeded "
      "DataLoader shuffles. Exit 1 when a check fails (with --strict: also when one warns).");
  // --repo-dir and --output-dir: the older tool's spelling of DIR and --out.
  cmd->add_option("dir,--repo-dir", opts->dir, "Repository or Python file to scan (default: the current directory)");
  cmd->add_option("--python", opts->python,
                  "Interpreter the trainer runs under (default: $VIRTUAL_ENV/bin/python, else python3 on PATH)");
  cmd->add_flag("--json", opts->json, "Print the rldk.env-audit/v1 JSON report instead of Markdown");
  cmd->add_option("--out,--output-dir", opts->out_dir, "Also write env_audit.json and env_audit.md into this folder");
  cmd->add_flag("--strict", opts->strict, "Exit 1 on warnings too");
  cmd->add_flag("!--no-probe", opts->probe, "Do not run Python; audit only the variables and the code");
  cmd->add_flag("!--no-packages", opts->packages, "Do not list installed packages (the lock)");
  cmd->add_option("--env-file", opts->env_file,
                  "Audit the variables in this KEY=VALUE file (e.g. a job's recorded `env`) instead of this "
                  "shell's environment");
  cmd->add_option("--probe-timeout", opts->probe_timeout_s, "Seconds the Python probe may take (default 60)")
      ->check(FinitePositive());
  cmd->callback([opts, &exit_code] { exit_code = run_env_audit_command(*opts); });
}

}  // namespace rldk::cli
