// rldk ckpt diff A B | --series RUN_DIR: how far two checkpoints (or a run's checkpoints) are apart, tensor by tensor
// and layer by layer. Prints text (or --json), writes the JSON, Markdown and HTML card with --out.
#include <cstdio>

#include "ckpt_command.h"
#include "commands.h"
#include "report_output.h"
#include "rldk/checkpoint.h"

namespace rldk::cli {

void add_ckpt_diff_options(CLI::App* cmd, const std::shared_ptr<CkptDiffCliOptions>& o) {
  cmd->add_option("checkpoints", o->checkpoints,
                  "A B: checkpoint files (.safetensors, .pt, .bin, *.index.json) or model folders "
                  "(save_pretrained output, sharded or not)")
      ->expected(0, 2);
  cmd->add_option("--series", o->series,
                  "A run folder: diff its checkpoint-<step>/ folders in step order (a drift curve over training)");
  cmd->add_option("--baseline", o->baseline,
                  "With --series: compare each checkpoint with the first (drift from the start) or the previous one")
      ->capture_default_str()
      ->check(CLI::IsMember({"first", "previous"}));
  cmd->add_flag("--reference", o->reference,
                "A is the reference weights (e.g. the initial SFT model) and B the trained policy; words the report so");
  cmd->add_option("--label-a", o->label_a, "Name of A in the report (default A, or reference)");
  cmd->add_option("--label-b", o->label_b, "Name of B in the report (default B, or policy)");
  cmd->add_flag("--json", o->json, "Print the rldk.ckpt-diff/v1 JSON document instead of text");
  cmd->add_option("--out", o->out, "Also write DIR/ckpt_diff.json, ckpt_diff.md and the card ckpt_diff.html");
  cmd->add_option("--top", o->top, "Top movers listed (largest L2 of the difference)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Worker threads (default: all cores)");
  cmd->add_option("--tolerance", o->tolerance,
                  "A tensor whose relative change ||B-A||/||A|| is at most this does not count as changed")
      ->capture_default_str()
      ->check(FiniteNonNegative());
  cmd->add_flag("--fail-on-change", o->fail_on_change,
                "Exit 1 when the checkpoints differ: a changed tensor (above --tolerance), a key on one side only, a "
                "shape or dtype mismatch");
}

int run_ckpt_diff(const CkptDiffCliOptions& opts, const char* me) {
  ckpt::DiffOptions options;
  options.threads = opts.threads;
  options.top = opts.top;
  options.tolerance = opts.tolerance;
  options.label_a = !opts.label_a.empty() ? opts.label_a : opts.reference ? "reference" : "A";
  options.label_b = !opts.label_b.empty() ? opts.label_b : opts.reference ? "policy" : "B";
  if (!opts.series.empty()) {
    if (!opts.checkpoints.empty()) {
      std::fprintf(stderr, "%s: give either two checkpoints or --series RUN_DIR, not both\n", me);
      return EXIT_INPUT_ERROR;
    }
    auto series = ckpt::diff_series(opts.series, opts.baseline, options);
    if (!series.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(series.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    Json json = ckpt::ckpt_series_json(series.value());
    if (!opts.out.empty() &&
        !write_report_folder(me, opts.out, {opts.series},
                             {{"ckpt_diff.json", json.dump()},
                              {"ckpt_diff.md", ckpt::ckpt_series_markdown(series.value())},
                              {"ckpt_diff.html", ckpt::ckpt_series_html(series.value())}})) {
      return EXIT_INPUT_ERROR;
    }
    print_text(stdout, opts.json ? json.dump() + "\n" : ckpt::ckpt_series_text(series.value()));
    bool differs = false;
    for (const auto& p : series->points) differs = differs || p.diff.differs();
    return opts.fail_on_change && differs ? EXIT_FINDINGS : EXIT_OK;
  }
  if (opts.checkpoints.size() != 2) {
    std::fprintf(stderr, "%s: give two checkpoints A B (or --series RUN_DIR)\n", me);
    return EXIT_INPUT_ERROR;
  }
  auto a = ckpt::read_checkpoint(opts.checkpoints[0]);
  if (!a.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(a.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  auto b = ckpt::read_checkpoint(opts.checkpoints[1]);
  if (!b.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(b.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  ckpt::CheckpointDiff diff = ckpt::diff_checkpoints(a.value(), b.value(), options);
  Json json = ckpt::ckpt_diff_json(diff);
  if (!opts.out.empty() && !write_report_folder(me, opts.out, opts.checkpoints,
                                                {{"ckpt_diff.json", json.dump()},
                                                 {"ckpt_diff.md", ckpt::ckpt_diff_markdown(diff)},
                                                 {"ckpt_diff.html", ckpt::ckpt_diff_html(diff)}})) {
    return EXIT_INPUT_ERROR;
  }
  print_text(stdout, opts.json ? json.dump() + "\n" : ckpt::ckpt_diff_text(diff, opts.top));
  return opts.fail_on_change && diff.differs() ? EXIT_FINDINGS : EXIT_OK;
}

void add_ckpt_command(CLI::App& app, int& exit_code) {
  CLI::App* ckpt = app.add_subcommand("ckpt", "Model checkpoints: compare two, or a run's series (diff).");
  ckpt->require_subcommand(1);
  auto opts = std::make_shared<CkptDiffCliOptions>();
  CLI::App* diff = ckpt->add_subcommand(
      "diff", "Per-tensor and per-layer distance between two checkpoints (L2, relative change, cosine, max |delta|, "
              "NaN/Inf), keys and shapes that differ; or --series RUN_DIR for drift over training. Reads safetensors, "
              "sharded and Hugging Face folders and torch.save files (with a restricted, non-executing pickle reader).");
  add_ckpt_diff_options(diff, opts);
  diff->callback([opts, &exit_code] { exit_code = run_ckpt_diff(*opts, "rldk ckpt diff"); });
}

}  // namespace rldk::cli
