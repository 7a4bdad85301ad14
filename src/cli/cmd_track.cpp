// rldk track diff A B: what changed between two runs' manifests (written by rldk.tracking or its TRL callback).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "report_output.h"
#include "rldk/output_file.h"
#include "rldk/provenance.h"

namespace rldk::cli {
namespace {

struct TrackDiffOptions {
  std::string a;
  std::string b;
  bool json = false;
  std::string markdown;
};

int run_track_diff(const TrackDiffOptions& opts) {
  auto diff = provenance::diff_run_manifests(opts.a, opts.b);
  if (!diff.ok()) {
    std::fprintf(stderr, "rldk track diff: %s\n", to_string(diff.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (!opts.markdown.empty()) {
    if (auto w = write_file_atomic(opts.markdown, provenance::manifest_diff_markdown(diff.value())); !w.ok()) {
      std::fprintf(stderr, "rldk track diff: %s\n", to_string(w.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  if (opts.json) {
    print_text(stdout, provenance::manifest_diff_json(diff.value()).dump() + "\n");
  } else {
    print_text(stdout, provenance::manifest_diff_text(diff.value()));
  }
  return diff->identical() ? EXIT_OK : EXIT_FINDINGS;
}

}  // namespace

void add_track_command(CLI::App& app, int& exit_code) {
  CLI::App* track = app.add_subcommand(
      "track", "Experiment manifests (written by rldk.tracking in Python): compare what two runs were made of.");
  // The older tool's `rldk track NAME [--interactive]` started tracking from the shell. Here a manifest is written
  // by the training process itself, so NAME gets one line saying where that happens instead of a parse error.
  auto older_name = std::make_shared<std::string>();
  track->add_option("name", *older_name, "")->group("");
  track->allow_extras();
  track->callback([track, older_name, &exit_code] {
    if (!track->get_subcommands().empty()) return;
    std::fprintf(stderr, "rldk track: %s: experiments are tracked from inside the training script "
                         "(rldk.tracking.ExperimentTracker, or the TRL callback's tracker=; docs/tracking.md); "
                         "this command compares two runs' manifests: rldk track diff A B\n",
                 older_name->empty() ? "no subcommand" : older_name->c_str());
    exit_code = EXIT_INPUT_ERROR;
  });
  auto opts = std::make_shared<TrackDiffOptions>();
  CLI::App* diff = track->add_subcommand(
      "diff",
      "What changed between two runs: datasets (file by file), uncommitted code (patch lines), packages, config, "
      "seeds, models (tensor by tensor), environment variables. Exit 0 when nothing did, 1 when something did.");
  diff->add_option("a", opts->a, "Run A: its rldk_manifest.json, or the folder holding it")->required();
  diff->add_option("b", opts->b, "Run B: its rldk_manifest.json, or the folder holding it")->required();
  diff->add_flag("--json", opts->json, "Print the rldk.track-diff/v1 JSON instead of text");
  diff->add_option("--md", opts->markdown, "Also write the comparison as Markdown to this file");
  diff->callback([opts, &exit_code] { exit_code = run_track_diff(*opts); });
}

}  // namespace rldk::cli
