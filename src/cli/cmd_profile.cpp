// rldk profile --run LOG: the compute report of a run from its log (memory leak test, step-time breakdown,
// throughput drops, tokens/s and MFU). The analysis is src/core/profile; this file parses and prints.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "report_output.h"
#include "rldk/profile.h"
#include "rldk/reader.h"

namespace rldk::cli {
namespace {

struct ProfileCliOptions {
  std::string source;
  std::vector<std::string> parts;
  ProfileOptions profile;
  std::string out;
  bool json = false;
  bool gate = false;
};

int run_profile(ProfileCliOptions& opts) {
  const char* me = "rldk profile";
  for (const auto& p : opts.parts) {
    static const char* known[] = {"memory", "memory_usage", "mem", "time", "compute_time", "step_time",
                                  "throughput", "timing"};
    bool ok = false;
    for (const char* k : known) ok = ok || p == k;
    if (!ok) {
      std::fprintf(stderr, "%s: --metrics %s: not a part of the profile; use memory (memory_usage) or time "
                           "(compute_time, throughput)\n", me, p.c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  opts.profile.parts = opts.parts;
  auto runs = read_runs(opts.source);
  if (!runs.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(runs.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (runs->size() != 1) {
    std::fprintf(stderr, "%s: %s holds %zu runs; point profile at one run\n", me, opts.source.c_str(), runs->size());
    return EXIT_INPUT_ERROR;
  }
  const Run& run = runs->front();
  ProfileReport report = profile_run(run, opts.profile);
  Json json = profile_json(report);
  std::string markdown = profile_markdown(report);
  if (!opts.out.empty() && !write_report_folder(me, opts.out, {opts.source},
                                                {{"profile.json", json.dump()},
                                                 {"profile.md", markdown},
                                                 {"profile.html", profile_html(report, run)}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() + "\n" : markdown);
  if (!opts.out.empty() && !opts.json) {
    std::printf("compute card: %s\n", (std::filesystem::path(opts.out) / "profile.html").string().c_str());
  }
  return opts.gate && report.leak() ? EXIT_FINDINGS : EXIT_OK;
}

}  // namespace

void add_profile_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ProfileCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Compute report from a run's log: memory trend with a leak test (growth per 1k steps, linear vs plateau, "
      "steps left to --memory-limit-gb), step-time breakdown (verl timing_s/*, TRL step_time), throughput drops, "
      "tokens/s and MFU. sys/* samples from `rldk monitor --cmd` count as memory metrics. Exit 1 with --gate on a leak.");
  cmd->add_option("run,--run", opts->source, "Run log: a file or a folder holding one run")->required();
  cmd->add_option("--metrics", opts->parts,
                  "Parts to report, comma-separated: memory (memory_usage), time (compute_time, throughput); "
                  "default both")
      ->delimiter(',');
  cmd->add_option("--memory-limit-gb", opts->profile.memory_limit_gb,
                  "Memory available (GB): a leak is projected to the steps left until it")
      ->check(FinitePositive());
  cmd->add_option("--leak-min-growth-gb", opts->profile.leak_min_growth_gb,
                  "Smallest rise over the run (GB) that can be a leak")
      ->capture_default_str()
      ->check(FiniteNonNegative());
  cmd->add_option("--tokens-per-step", opts->profile.tokens_per_step, "Tokens per optimizer step (for tokens/s)")
      ->check(FinitePositive());
  cmd->add_option("--model-params", opts->profile.model_params, "Model parameters, e.g. 7e9 (for MFU)")
      ->check(FinitePositive());
  cmd->add_option("--peak-flops", opts->profile.peak_flops,
                  "Peak FLOP/s of all GPUs together, e.g. 8 * 989e12 for 8 H100 bf16 (for MFU)")
      ->check(FinitePositive());
  cmd->add_option("--out,--output-dir", opts->out, "Also write DIR/profile.json, profile.md and the card profile.html");
  cmd->add_flag("--json", opts->json, "Print the rldk.profile/v1 JSON document instead of Markdown");
  cmd->add_flag("--gate", opts->gate, "Exit 1 when a memory metric leaks");
  cmd->callback([opts, &exit_code] { exit_code = run_profile(*opts); });
}

}  // namespace rldk::cli
