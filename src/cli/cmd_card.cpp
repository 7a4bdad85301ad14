// rldk card determinism|drift|reward: the report cards, made from runs already on disk (the older tool's command).
// Each runs the analysis behind the card and writes it the way the analysis command's --out does:
//   determinism RUN_OR_DIR  the replicas' logs in a folder (e.g. check-determinism --out DIR keeps them) -> card
//   drift A B               same as `rldk diff A B --out DIR`
//   reward RUN              same as `rldk reward health RUN --out DIR` (RUN: the run's samples or its folder)
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "diff_command.h"
#include "report_output.h"
#include "rldk/determinism.h"
#include "rldk/metric_dictionary.h"
#include "rldk/reader.h"
#include "rldk/report.h"
#include "rldk/reward_health.h"
#include "rldk/samples.h"

namespace rldk::cli {
namespace {

struct DeterminismCardOptions {
  std::string source;
  std::vector<std::string> compare;
  std::string out = "rldk_card";
};

int run_determinism_card(const DeterminismCardOptions& opts) {
  const char* me = "rldk card determinism";
  auto runs = read_runs(opts.source);
  if (!runs.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(runs.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (runs->size() < 2) {
    std::fprintf(stderr, "%s: %s holds %zu run(s); a determinism card compares replicas: point it at a folder "
                         "with two or more runs of the same command (rldk check-determinism --out DIR keeps them)\n",
                 me, opts.source.c_str(), runs->size());
    return EXIT_INPUT_ERROR;
  }
  DeterminismReport report;
  report.command = "(replicas read from " + opts.source + ")";
  report.replicas = runs->size();
  for (const auto& m : opts.compare) report.compare.metrics.push_back(MetricDictionary::builtin().canonical_name(m));
  if (report.compare.metrics.empty()) report.compare.metrics = default_replica_metrics(runs.value());
  report.comparison = compare_replicas(runs.value(), report.compare);
  report.hints = culprit_hints({}, report.comparison, runs->front().first_step());
  if (!write_report_folder(me, opts.out, {opts.source},
                           {{"determinism.json", determinism_json(report).dump()},
                            {"determinism.md", determinism_markdown(report)},
                            {"determinism.html", determinism_html(report)}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, determinism_text(report));
  std::printf("\ndeterminism card: %s\n", (std::filesystem::path(opts.out) / "determinism.html").string().c_str());
  return report.verdict() == "error" ? EXIT_INPUT_ERROR : EXIT_OK;
}

struct RewardCardOptions {
  std::vector<std::string> sources;
  std::string out = "rldk_card";
};

int run_reward_card(const RewardCardOptions& opts) {
  const char* me = "rldk card reward";
  Diagnostics diagnostics;
  auto health = reward_health(opts.sources, SampleReadOptions{}, RewardHealthOptions{}, diagnostics);
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  if (!health.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(health.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (!write_report_folder(me, opts.out, opts.sources,
                           {{"reward_health.json", reward_health_json(health.value()).dump()},
                            {"reward_health.md", reward_health_markdown(health.value())},
                            {"reward_health.html", reward_health_html(health.value())}})) {
    return EXIT_INPUT_ERROR;
  }
  std::printf("verdict: %s\nreward card: %s\n", health->verdict.c_str(),
              (std::filesystem::path(opts.out) / "reward_health.html").string().c_str());
  return EXIT_OK;
}

// A card is made from runs. A saved report given instead (often the JSON beside the card one wants) is named as
// such, with where its card already is, rather than read as metrics.
bool refuse_saved_reports(const char* me, const std::vector<std::string>& inputs, const char* usage) {
  for (const auto& path : inputs) {
    std::string schema = saved_report_schema(path);
    if (schema.empty()) continue;
    std::filesystem::path card = std::filesystem::path(path).replace_extension(".html");
    std::error_code ec;
    std::fprintf(stderr, "%s: %s is a saved %s report, not a run%s; a card is made from the runs themselves: %s\n",
                 me, path.c_str(), schema.c_str(),
                 std::filesystem::exists(card, ec) ? ("; its card is beside it: " + card.string()).c_str() : "", usage);
    return true;
  }
  return false;
}

}  // namespace

void add_card_command(CLI::App& app, int& exit_code) {
  CLI::App* card = app.add_subcommand(
      "card", "Make a report card (JSON, Markdown, HTML) from runs already on disk: determinism (replicas), "
              "drift (two runs), reward (a run's samples). Each runs the analysis of the command named in its help.");
  card->require_subcommand(1);

  auto det = std::make_shared<DeterminismCardOptions>();
  CLI::App* d = card->add_subcommand(
      "determinism", "Compare the replica runs in a folder step by step (bitwise), as `rldk check-determinism` does "
                     "after running them; writes DIR/determinism.{json,md,html}.");
  d->add_option("runs", det->source, "Folder holding the replicas' logs (or a file with several run ids)")->required();
  d->add_option("--compare", det->compare, "Metrics to compare, comma-separated (default: the important ones all "
                                           "replicas logged)")
      ->delimiter(',');
  d->add_option("--out,--output-dir", det->out, "Folder for the card (default rldk_card)");
  d->callback([det, &exit_code] {
    exit_code = refuse_saved_reports("rldk card determinism", {det->source}, "rldk card determinism REPLICAS_DIR")
                     ? EXIT_INPUT_ERROR
                     : run_determinism_card(*det);
  });

  auto drift = std::make_shared<DiffCliOptions>();
  drift->me = "rldk card drift";
  drift->out_dir = "rldk_card";
  CLI::App* dr = card->add_subcommand("drift", "Same as `rldk diff A B --out DIR`: the drift card of two runs.");
  add_diff_options(dr, drift);
  dr->callback([drift, &exit_code] {
    exit_code = refuse_saved_reports("rldk card drift", {drift->a, drift->b, drift->run_a, drift->run_b},
                                        "rldk card drift RUN_A RUN_B")
                    ? EXIT_INPUT_ERROR
                    : run_diff(*drift);
  });

  auto reward = std::make_shared<RewardCardOptions>();
  CLI::App* r = card->add_subcommand(
      "reward", "Same as `rldk reward health SAMPLES --out DIR`: the reward card from what the policy generated.");
  r->add_option("samples", reward->sources, "The run's samples: its folder (TRL completions/, verl rollout dumps) "
                                            "or sample files")
      ->required();
  r->add_option("--out,--output-dir", reward->out, "Folder for the card (default rldk_card)");
  r->callback([reward, &exit_code] {
    exit_code = refuse_saved_reports("rldk card reward", reward->sources, "rldk card reward SAMPLES")
                    ? EXIT_INPUT_ERROR
                    : run_reward_card(*reward);
  });
}

}  // namespace rldk::cli
