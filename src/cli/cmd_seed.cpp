// rldk seed --env [--seed N]: the environment a shell must export before Python starts for a reproducible run;
// --show and --validate: what this shell has of it.
// These are the settings a process cannot make for itself once running: the str-hash seed is fixed at
// interpreter start, and cuBLAS reads its workspace setting when CUDA initializes.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "report_output.h"

namespace rldk::cli {
namespace {

struct SeedCliOptions {
  bool env = false;
  bool show = false;
  bool validate = false;
  bool seed_given = false;
  int64_t seed = 0;
  std::optional<int> threads;
  std::string shell = "sh";
};

struct Export {
  std::string name;
  std::string value;
  std::string why;
};

std::vector<Export> determinism_exports(const SeedCliOptions& opts) {
  std::vector<Export> exports = {
      {"PYTHONHASHSEED", std::to_string(opts.seed), "fixes str/bytes hashing, so set iteration order repeats"},
      {"RLDK_SEED", std::to_string(opts.seed), "the seed rldk.seed.set_global_seed() uses when given none"},
      {"CUBLAS_WORKSPACE_CONFIG", ":4096:8", "deterministic cuBLAS reductions (required by "
                                             "torch.use_deterministic_algorithms on CUDA)"},
      {"TF_DETERMINISTIC_OPS", "1", "deterministic TensorFlow kernels, for pipelines that use it"},
      {"XLA_FLAGS", "--xla_gpu_deterministic_ops=true", "deterministic XLA (JAX) GPU kernels"},
  };
  if (opts.threads) {
    std::string n = std::to_string(*opts.threads);
    for (const char* var : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
      exports.push_back({var, n, "the same CPU thread count on every machine, so CPU reductions split the same"});
    }
  }
  return exports;
}

// Single quotes keep every value literal in sh and fish alike (none of the values holds a quote).
std::string render(const std::vector<Export>& exports, const std::string& shell) {
  std::string out = "# Determinism settings for a training run. Apply them before starting Python:\n";
  out += shell == "fish" ? "#   rldk seed --env --shell fish | source\n" : "#   eval \"$(rldk seed --env)\"\n";
  for (const auto& e : exports) {
    out += "# " + e.why + "\n";
    if (shell == "fish") {
      out += "set -gx " + e.name + " '" + e.value + "'\n";
    } else {
      out += "export " + e.name + "='" + e.value + "'\n";
    }
  }
  return out;
}

bool is_whole_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// Each setting as this shell has it. The seeds only need to be fixed (any number) unless --seed names one.
// Returns the number of settings missing or different.
size_t show_environment(const SeedCliOptions& opts) {
  size_t off = 0;
  std::string out;
  for (const auto& e : determinism_exports(opts)) {
    const char* value = std::getenv(e.name.c_str());
    bool seed_var = e.name == "PYTHONHASHSEED" || e.name == "RLDK_SEED";
    std::string state;
    if (value == nullptr) {
      state = "unset (want " + e.value + ")";
    } else if (seed_var && !opts.seed_given ? is_whole_number(value) : e.value == value) {
      state = std::string("ok: ") + value;
    } else {
      state = std::string(value) + " (want " + e.value + ")";
    }
    if (!state.starts_with("ok")) ++off;
    out += e.name + "=" + state + "\n";
  }
  out += off == 0 ? "this shell has every determinism setting\n"
                  : std::to_string(off) + " setting(s) missing or different; apply them with: eval \"$(rldk seed --env)\"\n";
  print_text(stdout, out);
  return off;
}

int run_seed(const SeedCliOptions& opts) {
  if (opts.show || opts.validate) {
    size_t off = show_environment(opts);
    // --validate is a check (exit 1 when a setting is missing); --show only reports.
    return opts.validate && off > 0 ? EXIT_FINDINGS : EXIT_OK;
  }
  if (!opts.env) {
    std::fputs("rldk seed: nothing to do: pass --env to print the exports a shell needs for a reproducible run, "
               "--show to see what this shell has\n",
               stderr);
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, render(determinism_exports(opts), opts.shell));
  return EXIT_OK;
}

}  // namespace

void add_seed_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<SeedCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "seed",
      "Print the environment a shell must export for a reproducible run (PYTHONHASHSEED, CUBLAS_WORKSPACE_CONFIG, "
      "...). In Python, call rldk.seed.set_global_seed(seed) for the rest. Unlike the older tool, this command "
      "cannot seed a process: it prints what the shell must set, or (--show, --validate) what it has.");
  cmd->add_flag("--env,--deterministic", opts->env,
                "Print shell exports (eval \"$(rldk seed --env)\"); --deterministic is the older tool's name");
  cmd->add_flag("--show", opts->show, "Show which determinism settings this shell has, and which it lacks");
  cmd->add_flag("--validate", opts->validate, "As --show, and exit 1 when a setting is missing or different");
  cmd->add_option("--seed", opts->seed, "Seed for PYTHONHASHSEED and RLDK_SEED (default 0)")
      ->check(CLI::Range(int64_t{0}, int64_t{4294967295}))
      ->each([opts](const std::string&) { opts->seed_given = true; });
  cmd->add_option("--threads", opts->threads, "Also pin OMP/MKL/OpenBLAS threads to this count")
      ->check(FinitePositive());
  cmd->add_option("--shell", opts->shell, "Syntax of the exports: sh (bash, zsh) or fish")
      ->check(CLI::IsMember({"sh", "fish"}));
  cmd->callback([opts, &exit_code] { exit_code = run_seed(*opts); });
}

}  // namespace rldk::cli
