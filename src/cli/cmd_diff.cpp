// rldk diff A B: where two runs part ways. Per signal: aligned statistics and the first divergence; a drift card.
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "diff_command.h"
#include "report_output.h"
#include "rldk/compare.h"
#include "rldk/metric_dictionary.h"

namespace rldk::cli {

int run_diff(const DiffCliOptions& opts) {
  auto a = read_one_run(opts.a, opts.run_a);
  if (!a.ok()) {
    std::fprintf(stderr, "%s: A: %s\n", opts.me, to_string(a.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  auto b = read_one_run(opts.b, opts.run_b);
  if (!b.ok()) {
    std::fprintf(stderr, "%s: B: %s\n", opts.me, to_string(b.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  DiffOptions options;
  options.divergence = opts.divergence;
  // Raw names (kl, reward_mean) are accepted and read as their canonical names, as the runs are.
  for (const auto& s : opts.signals) options.signals.push_back(MetricDictionary::builtin().canonical_name(s));
  if (!opts.noise_runs.empty()) {
    std::vector<Run> replicas;
    for (const auto& path : opts.noise_runs) {
      auto r = read_one_run(path);
      if (!r.ok()) {
        std::fprintf(stderr, "%s: --noise-run: %s\n", opts.me, to_string(r.error()).c_str());
        return EXIT_INPUT_ERROR;
      }
      replicas.push_back(std::move(r.value()));
    }
    std::vector<std::string> names = options.signals;
    if (names.empty()) {
      for (const auto& [name, s] : a->series) names.push_back(name);
    }
    options.sigma_by_signal = replica_noise_sigma(a.value(), replicas, names);
  }
  auto report = diff_runs(a.value(), b.value(), options);
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", opts.me, to_string(report.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  for (const auto& m : report->missing) std::fprintf(stderr, "%s: not compared: %s\n", opts.me, m.c_str());
  Json json = diff_json(report.value(), options);
  if (opts.json) {
    print_text(stdout, json.dump());
  } else {
    print_text(stdout, diff_text(report.value()));
  }
  if (!opts.out_dir.empty()) {
    std::filesystem::path dir(opts.out_dir);
    std::vector<std::string> inputs = opts.noise_runs;
    inputs.insert(inputs.end(), {opts.a, opts.b});
    if (!write_report_folder(opts.me, opts.out_dir, inputs,
                             {{"diff.json", json.dump()},
                              {"diff.md", diff_markdown(report.value())},
                              {"diff.html", diff_html(report.value())}})) {
      return EXIT_INPUT_ERROR;
    }
    if (!opts.json) std::printf("\ndrift card: %s\n", (dir / "diff.html").string().c_str());
  }
  return opts.gate && !report->first_signal.empty() ? EXIT_FINDINGS : EXIT_OK;
}

void add_diff_options(CLI::App* cmd, const std::shared_ptr<DiffCliOptions>& opts) {
  // --a/--b and --output-dir are the older tool's spelling of the same arguments.
  cmd->add_option("a,--a", opts->a, "Run A (the baseline): a log file or a folder holding one run")->required();
  cmd->add_option("b,--b", opts->b, "Run B (the changed run)")->required();
  cmd->add_option("--signals", opts->signals,
                  "Metrics to compare, comma-separated (canonical or raw names; default: the important canonical "
                  "metrics both runs have, e.g. policy/kl, reward/mean, policy/entropy)")
      ->delimiter(',');
  cmd->add_option("--run-a", opts->run_a, "Run id to take from A when it holds several runs");
  cmd->add_option("--run-b", opts->run_b, "Run id to take from B when it holds several runs");
  cmd->add_option("--noise-run", opts->noise_runs,
                  "A replica of A (same config, another seed); repeatable. The spread of replica - A sets the noise "
                  "scale instead of each run's step-to-step changes")
      ->allow_extra_args(false);
  cmd->add_flag("--json", opts->json, "Print the rldk.diff/v1 JSON report instead of text");
  cmd->add_option("--out,--output-dir", opts->out_dir, "Write the drift card here: diff.json, diff.md, diff.html");
  cmd->add_flag("--gate", opts->gate, "Exit 1 when any signal diverged (for CI)");
  cmd->add_option("--warmup", opts->divergence.warmup, "Points used to estimate the noise before testing")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--spike-z", opts->divergence.spike_z, "Spike threshold on |B-A| in noise units")
      ->capture_default_str()
      ->check(FinitePositive());
  cmd->add_option("--cusum-k", opts->divergence.cusum_k, "CUSUM reference value (half the shift to detect, in noise units)")
      ->capture_default_str()
      ->check(FiniteNonNegative());
  cmd->add_option("--cusum-h", opts->divergence.cusum_h,
                  "CUSUM decision interval: higher means fewer false alarms and a longer delay (docs/compare.md)")
      ->capture_default_str()
      ->check(FinitePositive());
}

void add_diff_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<DiffCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two runs step by step: per signal the largest difference, the mean drift and the first "
              "divergence (spike, level shift, offset or drift, beyond the runs' own noise), and which signal "
              "diverged first. Writes a drift card with --out.");
  add_diff_options(cmd, opts);
  cmd->callback([opts, &exit_code] { exit_code = run_diff(*opts); });
}

}  // namespace rldk::cli
