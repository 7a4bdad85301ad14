// rldk reward health|length-bias SAMPLES...: judge the reward model from what the policy generated (per-sample
// rollouts: TRL completions Parquet, verl rollout dumps, JSONL score files).
#include <cstdio>
#include <memory>

#include "commands.h"
#include "report_output.h"
#include "rldk/reward_health.h"
#include "rldk/samples.h"

namespace rldk::cli {
namespace {

struct RewardCliOptions {
  std::vector<std::string> sources;
  SampleColumns columns;
  std::vector<double> range;  // LO HI
  bool json = false;
  bool gate = false;
  std::string out;
};

int run_reward_health(const RewardCliOptions& opts, const char* me, bool length_only) {
  RewardHealthOptions options;
  if (!opts.range.empty()) {
    if (opts.range.size() != 2 || !(opts.range[0] < opts.range[1])) {
      std::fprintf(stderr, "%s: --reward-range takes two numbers LO HI with LO < HI\n", me);
      return EXIT_INPUT_ERROR;
    }
    options.range_lo = opts.range[0];
    options.range_hi = opts.range[1];
  }
  SampleReadOptions read;
  read.columns = opts.columns;
  RewardHealthAccumulator samples;
  Diagnostics diagnostics;
  for (const auto& source : opts.sources) {
    Status status = read_samples(source, read, samples, diagnostics);
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(status.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  // Bad rows are not errors: say where they are and carry on with what could be read.
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  RewardHealthReport report = samples.finish(options);
  if (length_only) {
    // The older tool's command: the length part alone, every other check left out of the report.
    for (auto& column : report.columns) {
      RewardColumnHealth kept;
      kept.name = column.name;
      kept.samples = column.samples;
      kept.min = column.min;
      kept.max = column.max;
      kept.mean = column.mean;
      kept.length_bias = std::move(column.length_bias);
      kept.saturation.reason = kept.zero_variance_groups.reason = kept.drift.reason = kept.gold.reason =
          kept.suspicious_samples.reason = "not run by `rldk reward length-bias`";
      column = std::move(kept);
    }
    report.verdict = reward_health_verdict(report);
  }
  Json json = reward_health_json(report);
  std::string markdown = reward_health_markdown(report);
  if (!opts.out.empty() &&
      !write_report_folder(me, opts.out, opts.sources,
                           {{"reward_health.json", json.dump()}, {"reward_health.md", markdown}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() : markdown);
  return opts.gate && report.verdict != "pass" ? EXIT_FINDINGS : EXIT_OK;
}

void add_health_options(CLI::App* cmd, const std::shared_ptr<RewardCliOptions>& o) {
  cmd->add_option("samples", o->sources,
                  "Sample files or folders: TRL's completions/ Parquet (or the trainer's output folder), verl "
                  "rollout dumps ({step}.jsonl), JSONL or Parquet score files")
      ->required();
  cmd->add_option("--reward-col", o->columns.rewards,
                  "Reward column to judge; repeatable (default: every numeric column that is not the step, "
                  "advantage or gold)");
  cmd->add_option("--prompt-col", o->columns.prompt, "Prompt column (default: prompt, input, query, question)");
  cmd->add_option("--response-col", o->columns.completion,
                  "Completion column (default: completion, output, response, answer)");
  cmd->add_option("--step-col", o->columns.step, "Step column (default: step, global_step; else the file name's number)");
  cmd->add_option("--group-col", o->columns.group, "GRPO group column (default: group, uid; else the prompt)");
  cmd->add_option("--gold,--gold-col", o->columns.gold, "Gold/judge score column (default: gold, gold_score, judge_score)");
  cmd->add_option("--reward-range", o->range, "The reward's declared range LO HI (default: the observed one)")
      ->expected(2)
      ->check(CLI::Number);
  cmd->add_flag("--json", o->json, "Print the rldk.reward-health/v1 JSON document instead of Markdown");
  cmd->add_option("--out", o->out, "Also write DIR/reward_health.json and reward_health.md");
  cmd->add_flag("--gate", o->gate, "Exit 1 when a check finds a warning or a critical problem");
}

}  // namespace

void add_reward_command(CLI::App& app, int& exit_code) {
  CLI::App* reward = app.add_subcommand(
      "reward", "Judge the reward model from the samples the policy generated: saturation, zero-variance GRPO "
                "groups, length bias, drift over training, proxy vs gold, samples that look like hacking.");
  reward->require_subcommand(1);
  auto health_opts = std::make_shared<RewardCliOptions>();
  CLI::App* health = reward->add_subcommand(
      "health", "Every reward-model check on per-sample rollouts, with intervals and p-values; a check whose "
                "inputs are missing says so. Exit 1 with --gate when one finds a problem.");
  add_health_options(health, health_opts);
  health->callback([health_opts, &exit_code] { exit_code = run_reward_health(*health_opts, "rldk reward health", false); });
  auto length_opts = std::make_shared<RewardCliOptions>();
  CLI::App* length = reward->add_subcommand(
      "length-bias", "The length part of `rldk reward health` alone: reward vs length overall and within prompt, "
                     "and the share of the reward gain that the length shift explains.");
  add_health_options(length, length_opts);
  length->callback(
      [length_opts, &exit_code] { exit_code = run_reward_health(*length_opts, "rldk reward length-bias", true); });
}

}  // namespace rldk::cli
