// rldk scan RUN... (aliases: rldk log-scan, rldk forensics log-scan): what went wrong in a run, when it started,
// and what to change. Findings + per-area health; JSON (rldk.scan/v1) and Markdown.
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "report_output.h"
#include "scan_command.h"
#include "rldk/reader.h"
#include "rldk/scan.h"

namespace rldk::cli {
int run_scan_command(const ScanCommandOptions& opts, const char* name) {
  const DetectorCatalog& catalog = builtin_detector_catalog();
  for (const auto* list : {&opts.only, &opts.skip}) {
    auto unknown = unknown_detector_names(*list, catalog);
    if (!unknown.empty()) {
      std::fprintf(stderr, "rldk %s: unknown detector, fault type or area '%s' (see docs/detectors.md)\n", name,
                   unknown.front().c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  Severity fail_level = Severity::critical;
  bool never = opts.fail_on == "never";
  if (!never) parse_severity(opts.fail_on, fail_level);  // validated by the option's check
  ScanOptions scan_options;
  scan_options.only = opts.only;
  scan_options.skip = opts.skip;
  scan_options.plan_steps = opts.plan_steps;
  std::vector<RunScan> scans;
  int code = EXIT_OK;
  // A folder of many runs shows how far it got, on a terminal only (the line is redrawn in place).
  const bool terminal = ::isatty(STDERR_FILENO);
  auto progress = [&](size_t done, size_t total) {
    if (terminal && total >= 20) std::fprintf(stderr, "\rrldk %s: %zu of %zu files scanned", name, done, total);
    if (terminal && total >= 20 && done == total) std::fprintf(stderr, "\n");
  };
  for (const auto& source : opts.sources) {
    auto runs = scan_source(source, scan_options, opts.threads, progress);
    if (!runs.ok()) {
      std::fprintf(stderr, "rldk %s: %s\n", name, to_string(runs.error()).c_str());
      code = EXIT_INPUT_ERROR;
      continue;
    }
    for (auto& run : runs.value()) {
      // Bad lines are not errors: say where they are and carry on with what could be read.
      for (const auto& d : run.diagnostics.examples()) {
        std::fprintf(stderr, "rldk %s: warning: %s\n", name, to_string(d).c_str());
      }
      scans.push_back(std::move(run.scan));
    }
  }
  if (scans.empty() && code != EXIT_OK) return code;
  // Each output is made only when something asks for it (a fleet's report is a large part of the work).
  std::string json_text = opts.json || !opts.out.empty() ? scan_json(scans).dump() + "\n" : "";
  std::string md = !opts.json || !opts.out.empty() ? scan_markdown(scans) : "";
  if (!opts.out.empty()) {
    std::string me = std::string("rldk ") + name;
    if (!write_report_folder(me.c_str(), opts.out, opts.sources, {{"scan.json", json_text}, {"scan.md", md}})) {
      return EXIT_INPUT_ERROR;
    }
  }
  print_text(stdout, opts.json ? json_text : md);
  if (code != EXIT_OK) return code;
  return !never && findings_at_or_above(scans, fail_level) > 0 ? EXIT_FINDINGS : EXIT_OK;
}

CLI::App* add_scan_options(CLI::App* cmd, const std::shared_ptr<ScanCommandOptions>& opts) {
  cmd->add_option("runs", opts->sources, "Run logs: files (gzip/zstd too), folders of runs, or - for stdin")
      ->required();
  cmd->add_flag("--json", opts->json, "Print the rldk.scan/v1 JSON document instead of Markdown");
  cmd->add_option("--out", opts->out, "Also write DIR/scan.json and DIR/scan.md");
  cmd->add_option("--fail-on", opts->fail_on,
                  "Exit 1 when a finding at or above this severity is found (default: critical)")
      ->check(CLI::IsMember({"info", "warning", "critical", "never"}));
  cmd->add_option("--only", opts->only, "Run only these detectors (ids, fault types or areas; comma-separated)")
      ->delimiter(',');
  cmd->add_option("--threads", opts->threads,
                  "Files of a folder of runs read and scanned at once (default 0: one per core); the report is the "
                  "same for any number");
  cmd->add_option("--skip", opts->skip, "Do not run these detectors (ids, fault types or areas; comma-separated)")
      ->delimiter(',');
  cmd->add_option("--plan-steps", opts->plan_steps,
                  "Steps read before the detectors are planned (their metrics, the logging interval); after that the "
                  "scan keeps no more of the run. Runs this short are planned on all their data (default 2048)")
      ->check(CLI::PositiveNumber);
  return cmd;
}

void add_scan_command(CLI::App& app, int& exit_code) {
  const char* help =
      "Scan a finished (or running) training log for failures: KL spikes, shifts and drift, entropy collapse, reward "
      "hacking, gradient explosions, truncation, NaNs and more. Each finding is an episode with onset, end, peak, "
      "evidence, a plain explanation and fixes; per-area health scores. Exit 1 when a finding reaches --fail-on.";
  for (const char* name : {"scan", "log-scan"}) {
    auto opts = std::make_shared<ScanCommandOptions>();
    CLI::App* cmd = app.add_subcommand(name, name == std::string("scan") ? help : "Same as `rldk scan`.");
    add_scan_options(cmd, opts);
    cmd->callback([opts, &exit_code, name] { exit_code = run_scan_command(*opts, name); });
  }
}

}  // namespace rldk::cli
