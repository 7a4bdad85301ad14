// rldk seed --env [--seed N]: the environment a shell must export before Python starts for a reproducible run.
// These are the settings a process cannot make for itself once running: the str-hash seed is fixed at
// interpreter start, and cuBLAS reads its workspace setting when CUDA initializes.
#include <cstdio>
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

int run_seed(const SeedCliOptions& opts) {
  if (!opts.env) {
    std::fputs("rldk seed: nothing to do: pass --env to print the exports a shell needs for a reproducible run\n",
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
      "...). In Python, call rldk.seed.set_global_seed(seed) for the rest.");
  cmd->add_flag("--env", opts->env, "Print shell exports (eval \"$(rldk seed --env)\")");
  cmd->add_option("--seed", opts->seed, "Seed for PYTHONHASHSEED and RLDK_SEED (default 0)")
      ->check(CLI::Range(int64_t{0}, int64_t{4294967295}));
  cmd->add_option("--threads", opts->threads, "Also pin OMP/MKL/OpenBLAS threads to this count")
      ->check(FinitePositive());
  cmd->add_option("--shell", opts->shell, "Syntax of the exports: sh (bash, zsh) or fish")
      ->check(CLI::IsMember({"sh", "fish"}));
  cmd->callback([opts, &exit_code] { exit_code = run_seed(*opts); });
}

}  // namespace rldk::cli
