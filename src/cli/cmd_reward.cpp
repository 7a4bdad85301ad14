// rldk reward health|length-bias SAMPLES...: judge the reward model from what the policy generated (per-sample
// rollouts: TRL completions Parquet, verl rollout dumps, JSONL score files).
#include <stdlib.h>  // mkdtemp

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "report_output.h"
#include "rldk/output_file.h"
#include "rldk/reward_drift.h"
#include "rldk/reward_health.h"
#include "rldk/reward_model_scores.h"
#include "rldk/samples.h"

namespace rldk::cli {
namespace {

struct RewardCliOptions {
  std::vector<std::string> sources;
  SampleColumns columns;
  std::vector<double> range;  // LO HI
  std::string kl_log, kl_metric;
  bool json = false;
  bool gate = false;
  std::string out;
  std::string reference;  // the older tool's --reference BASELINE: refused with a clear line (not built)
};

int run_reward_health(const RewardCliOptions& opts, const char* me, bool length_only) {
  if (!opts.reference.empty()) {
    std::fprintf(stderr, "%s: --reference %s: judging rollouts against a baseline run's rollouts is not built; "
                         "compare two reward models with `rldk reward drift A B`, or the runs' logs with "
                         "`rldk diff A B`\n", me, opts.reference.c_str());
    return EXIT_INPUT_ERROR;
  }
  std::error_code ec;
  if (!opts.columns.gold.empty() && std::filesystem::is_regular_file(opts.columns.gold, ec)) {
    std::fprintf(stderr, "%s: --gold %s: here --gold names the samples' gold-score column; a separate file of gold "
                         "results is not joined (add the gold score to each sample as a column, e.g. gold)\n",
                 me, opts.columns.gold.c_str());
    return EXIT_INPUT_ERROR;
  }
  RewardHealthOptions options;
  if (!opts.range.empty()) {
    if (opts.range.size() != 2 || !(opts.range[0] < opts.range[1])) {
      std::fprintf(stderr, "%s: --reward-range takes two numbers LO HI with LO < HI\n", me);
      return EXIT_INPUT_ERROR;
    }
    options.range_lo = opts.range[0];
    options.range_hi = opts.range[1];
  }
  if (!opts.kl_log.empty()) {
    auto kl = kl_series_from_log(opts.kl_log, opts.kl_metric);
    if (!kl.ok()) {
      std::fprintf(stderr, "%s: --kl-log: %s\n", me, to_string(kl.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    options.kl = std::move(kl).value();
  }
  SampleReadOptions read;
  read.columns = opts.columns;
  Diagnostics diagnostics;
  auto health = reward_health(opts.sources, read, options, diagnostics);
  // Bad rows are not errors: say where they are and carry on with what could be read.
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (!health.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(health.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  RewardHealthReport report = std::move(health).value();
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
          kept.suspicious_samples.reason = kept.shortcut_features.reason = "not run by `rldk reward length-bias`";
      column = std::move(kept);
    }
    report.calibration = CalibrationCheck{};
    report.calibration.reason = "not run by `rldk reward length-bias`";
    report.verdict = reward_health_verdict(report);
  }
  Json json = reward_health_json(report);
  std::string markdown = reward_health_markdown(report);
  if (!opts.out.empty() &&
      !write_report_folder(me, opts.out, opts.sources,
                           {{"reward_health.json", json.dump()},
                            {"reward_health.md", markdown},
                            {"reward_health.html", reward_health_html(report)}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() : markdown);
  return opts.gate && report.verdict != "pass" ? EXIT_FINDINGS : EXIT_OK;
}

void add_health_options(CLI::App* cmd, const std::shared_ptr<RewardCliOptions>& o) {
  // --run, --run-path and --scores are the older tool's spellings of SAMPLES.
  cmd->add_option("samples,--run,--run-path,--scores", o->sources,
                  "Sample files or folders: TRL's completions/ Parquet (or the trainer's output folder), verl "
                  "rollout dumps ({step}.jsonl), JSONL or Parquet score files")
      ->required();
  cmd->add_option("--reference", o->reference, "Not built: a baseline run's rollouts (the older tool's flag); "
                                               "refused with a message");
  cmd->add_option("--reward-col", o->columns.rewards,
                  "Reward column to judge; repeatable (default: every numeric column that is not the step, "
                  "advantage or gold)");
  cmd->add_option("--prompt-col", o->columns.prompt, "Prompt column (default: prompt, input, query, question)");
  cmd->add_option("--response-col", o->columns.completion,
                  "Completion column (default: completion, output, response, answer)");
  cmd->add_option("--step-col", o->columns.step, "Step column (default: step, global_step; else the file name's number)");
  cmd->add_option("--group-col", o->columns.group, "GRPO group column (default: group, uid; else the prompt)");
  cmd->add_option("--gold,--gold-col", o->columns.gold, "Gold/judge score column (default: gold, gold_score, judge_score)");
  cmd->add_option("--chosen-col", o->columns.first,
                  "Preference pairs: the preferred (or A) completion column (default: chosen, response_a)");
  cmd->add_option("--rejected-col", o->columns.second,
                  "Preference pairs: the other (or B) completion column (default: rejected, response_b)");
  cmd->add_option("--chosen-score-col", o->columns.first_score,
                  "Preference pairs: the reward model's score of the chosen/A completion (default: chosen_score, "
                  "score_chosen, reward_chosen, score_a)");
  cmd->add_option("--rejected-score-col", o->columns.second_score,
                  "Preference pairs: the score of the rejected/B completion (default: rejected_score, score_b, ...)");
  cmd->add_option("--label-col", o->columns.label,
                  "Preference pairs: which completion was preferred, 1/a = the first, 0/b = the second, 0.5/tie "
                  "(default: label, preference, winner; chosen/rejected pairs need none)");
  cmd->add_option("--kl-log", o->kl_log,
                  "The training log (any format rldk reads) whose KL to the reference model per step is fitted "
                  "against the gold score (Gao et al.: gold peaks at some KL)");
  cmd->add_option("--kl-metric", o->kl_metric,
                  "The KL metric of --kl-log (default: policy/kl_seq, else policy/kl, else policy/kl_loss)");
  cmd->add_option("--reward-range", o->range, "The reward's declared range LO HI (default: the observed one)")
      ->expected(2)
      ->check(CLI::Number);
  cmd->add_flag("--json", o->json, "Print the rldk.reward-health/v1 JSON document instead of Markdown");
  cmd->add_option("--out,--output-dir", o->out, "Also write DIR/reward_health.json, reward_health.md and the reward card reward_health.html");
  cmd->add_flag("--gate", o->gate, "Exit 1 when a check finds a warning or a critical problem");
}

struct DriftCliOptions {
  std::string a, b;
  std::string a_col, b_col, prompt_col, response_col;
  std::vector<std::string> slices;  // NAME=REGEX
  uint64_t seed = 0;
  size_t bootstrap = 2000;
  bool json = false;
  bool gate = false;
  std::string out;
  // A or B a reward model folder: the samples it scores, and how.
  std::string prompts;
  RewardModelScoreOptions scoring;
};

// A scratch folder for the score files of model sides, removed on every path.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rldk-drift-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// Scores the prompts file with each side that is a model folder; that side then reads the score file written
// (its "score" column). The score files' texts are returned for the report folder.
bool score_model_sides(const char* me, const DriftCliOptions& opts, const ScratchDir& scratch,
                       RewardDriftOptions& options, std::string& a_path, std::string& b_path,
                       std::vector<ReportFile>& score_files) {
  for (auto [side, name, path, col, read] :
       {std::tuple{"A", "a", &a_path, &opts.a_col, &options.read_a},
        std::tuple{"B", "b", &b_path, &opts.b_col, &options.read_b}}) {
    if (!is_reward_model_dir(*path)) continue;
    if (!col->empty()) {
      std::fprintf(stderr, "%s: %s is a reward model folder; --%s-col names a column of a score file\n", me, side,
                   name);
      return false;
    }
    if (scratch.path.empty()) {
      std::fprintf(stderr, "%s: cannot create a temporary folder for the scores\n", me);
      return false;
    }
    std::string scores = scratch.path + "/scores_" + name + ".jsonl";
    RewardModelScoreOptions scoring = opts.scoring;
    scoring.prompt_col = opts.prompt_col;  // read from the prompts file, and written under the same names
    scoring.response_col = opts.response_col;
    Status scored = score_with_reward_model(*path, opts.prompts, scores, scoring);
    if (!scored.ok()) {
      std::fprintf(stderr, "%s: scoring with reward model %s: %s\n", me, side, to_string(scored.error()).c_str());
      return false;
    }
    std::ifstream in(scores, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    score_files.push_back({std::string("reward_drift_scores_") + name + ".jsonl", text.str()});
    *path = scores;
    read->columns.rewards = {"score"};
  }
  return true;
}

int run_reward_drift(const DriftCliOptions& opts) {
  const char* me = "rldk reward drift";
  for (const auto& path : {opts.a, opts.b}) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      std::fprintf(stderr, "%s: %s: no such file or folder\n", me, path.c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  bool a_model = is_reward_model_dir(opts.a), b_model = is_reward_model_dir(opts.b);
  if (!a_model && !b_model && !opts.prompts.empty()) {
    std::fprintf(stderr, "%s: --prompts is for reward model folders (holding config.json); A and B are score files\n",
                 me);
    return EXIT_INPUT_ERROR;
  }
  if ((a_model || b_model) && opts.prompts.empty()) {
    std::fprintf(stderr,
                 "%s: %s is a reward model folder: give the prompts and completions to score with --prompts FILE\n",
                 me, a_model ? "A" : "B");
    return EXIT_INPUT_ERROR;
  }
  RewardDriftOptions options;
  for (auto* read : {&options.read_a, &options.read_b}) {
    read->completion_required = false;  // score files may rate prompts alone
    read->columns.prompt = opts.prompt_col;
    read->columns.completion = opts.response_col;
  }
  if (!opts.a_col.empty()) options.read_a.columns.rewards = {opts.a_col};
  if (!opts.b_col.empty()) options.read_b.columns.rewards = {opts.b_col};
  for (const auto& slice : opts.slices) {
    size_t eq = slice.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "%s: --slice takes NAME=REGEX, got '%s'\n", me, slice.c_str());
      return EXIT_INPUT_ERROR;
    }
    options.slices.emplace_back(slice.substr(0, eq), slice.substr(eq + 1));
  }
  options.seed = opts.seed;
  options.bootstrap = opts.bootstrap;
  ScratchDir scratch;
  std::string a_path = opts.a, b_path = opts.b;
  std::vector<ReportFile> score_files;
  if (a_model || b_model) {
    // The report folder is checked before minutes of scoring, not after.
    for (const char* name : {"reward_drift.json", "reward_drift_scores_a.jsonl", "reward_drift_scores_b.jsonl"}) {
      if (opts.out.empty()) break;
      Status allowed = check_output_outside_inputs(std::filesystem::path(opts.out) / name,
                                                   {opts.a, opts.b, opts.prompts});
      if (!allowed.ok()) {
        std::fprintf(stderr, "%s: %s\n", me, to_string(allowed.error()).c_str());
        return EXIT_INPUT_ERROR;
      }
    }
    if (!score_model_sides(me, opts, scratch, options, a_path, b_path, score_files)) return EXIT_INPUT_ERROR;
  }
  Diagnostics diagnostics;
  auto report = compare_reward_models({a_path}, {b_path}, options, diagnostics);
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(report.error()).c_str());
    for (const auto& [side, path] : {std::pair{"A", &opts.a}, std::pair{"B", &opts.b}}) {
      std::error_code ec;
      if (!opts.prompts.empty() && std::filesystem::is_directory(*path, ec) && !is_reward_model_dir(*path)) {
        std::fprintf(stderr, "%s: %s is a folder without config.json, so it was read as sample files, not as a "
                     "reward model folder\n", me, side);
      }
    }
    return EXIT_INPUT_ERROR;
  }
  // A model side was read from a temporary score file: name the model instead (rldk.reward.drift does the same).
  if (a_model) report->format_a = "reward model " + opts.a;
  if (b_model) report->format_b = "reward model " + opts.b;
  Json json = reward_drift_json(report.value());
  std::string markdown = reward_drift_markdown(report.value());
  std::vector<ReportFile> files = {{"reward_drift.json", json.dump()},
                                   {"reward_drift.md", markdown},
                                   {"reward_drift.html", reward_drift_html(report.value())}};
  for (auto& f : score_files) files.push_back(std::move(f));
  std::vector<std::string> inputs = {opts.a, opts.b};
  if (!opts.prompts.empty()) inputs.push_back(opts.prompts);
  if (!opts.out.empty() && !write_report_folder(me, opts.out, inputs, files)) return EXIT_INPUT_ERROR;
  print_text(stdout, opts.json ? json.dump() : markdown);
  return opts.gate && report->verdict != "agree" ? EXIT_FINDINGS : EXIT_OK;
}

void add_drift_command(CLI::App* reward, int& exit_code) {
  auto o = std::make_shared<DriftCliOptions>();
  CLI::App* cmd = reward->add_subcommand(
      "drift", "Compare two reward models on the same samples: paired correlations overall and within prompt, "
               "same-prompt ranking agreement, scale/offset, the paired mean difference with a bootstrap interval, "
               "slices, and the samples they disagree on most. Samples are matched by prompt and completion.");
  cmd->add_option("a", o->a,
                  "Scores of reward model A: a sample file or folder (JSONL, Parquet), or a local reward model "
                  "folder (config.json; transformers sequence classification) to score --prompts with")
      ->required();
  cmd->add_option("b", o->b, "Scores of reward model B on the same samples (may be the same file with --b-col), "
                             "or a reward model folder")
      ->required();
  cmd->add_option("--prompts", o->prompts,
                  "JSONL or Parquet file of prompts and completions that a reward model folder scores (in Python, "
                  "with torch and transformers: $RLDK_PYTHON, else python3 beside rldk, else on PATH)");
  cmd->add_option("--batch-size", o->scoring.batch_size, "Reward model: inputs per forward pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--max-length", o->scoring.max_length,
                  "Reward model: most tokens per input (capped by the model's limit); longer inputs lose their start")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--device", o->scoring.device, "Reward model: cpu, cuda, cuda:N (default: cuda when available)");
  cmd->add_option("--dtype", o->scoring.dtype, "Reward model: weights' type")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "float64", "bfloat16", "float16"}));
  cmd->add_option("--a-col", o->a_col, "Score column of A (default: its first reward column)");
  cmd->add_option("--b-col", o->b_col, "Score column of B (default: its first reward column)");
  cmd->add_option("--prompt-col", o->prompt_col, "Prompt column of both (default: prompt, input, query, question)");
  cmd->add_option("--response-col", o->response_col, "Completion column of both (default: completion, output, ...)");
  cmd->add_option("--slice", o->slices, "NAME=REGEX: also report the mean difference on prompts matching REGEX; repeatable");
  cmd->add_option("--seed", o->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--bootstrap", o->bootstrap, "Bootstrap resamples")->capture_default_str()->check(CLI::Range(100, 1000000));
  cmd->add_flag("--json", o->json, "Print the rldk.reward-drift/v1 JSON document instead of Markdown");
  cmd->add_option("--out,--output-dir", o->out,
                  "Also write DIR/reward_drift.json, reward_drift.md, the drift card reward_drift.html (and a "
                  "reward model's scores, "
                  "reward_drift_scores_a.jsonl / _b.jsonl)");
  cmd->add_flag("--gate", o->gate, "Exit 1 unless the verdict is agree");
  cmd->alias("reward-drift");  // the older tool's name
  cmd->callback([o, &exit_code] { exit_code = run_reward_drift(*o); });
}

}  // namespace

void add_reward_command(CLI::App& app, int& exit_code) {
  CLI::App* reward = app.add_subcommand(
      "reward", "Judge the reward model from the samples the policy generated: saturation, zero-variance GRPO "
                "groups, length bias, drift over training, proxy vs gold, samples that look like hacking; and "
                "compare two reward models on the same samples.");
  reward->require_subcommand(1);
  auto health_opts = std::make_shared<RewardCliOptions>();
  CLI::App* health = reward->add_subcommand(
      "health", "Every reward-model check on per-sample rollouts, with intervals and p-values; a check whose "
                "inputs are missing says so. Exit 1 with --gate when one finds a problem.");
  add_health_options(health, health_opts);
  health->alias("reward-health");  // the older tool's name
  health->callback([health_opts, &exit_code] { exit_code = run_reward_health(*health_opts, "rldk reward health", false); });
  auto length_opts = std::make_shared<RewardCliOptions>();
  CLI::App* length = reward->add_subcommand(
      "length-bias", "The length part of `rldk reward health` alone: reward vs length overall and within prompt, "
                     "and the share of the reward gain that the length shift explains.");
  add_health_options(length, length_opts);
  length->callback(
      [length_opts, &exit_code] { exit_code = run_reward_health(*length_opts, "rldk reward length-bias", true); });
  add_drift_command(reward, exit_code);

  // The older tool's top-level `rldk reward-health --run ...`.
  auto top_opts = std::make_shared<RewardCliOptions>();
  CLI::App* top = app.add_subcommand("reward-health", "Same as `rldk reward health`.");
  add_health_options(top, top_opts);
  top->callback([top_opts, &exit_code] { exit_code = run_reward_health(*top_opts, "rldk reward-health", false); });
}

}  // namespace rldk::cli
