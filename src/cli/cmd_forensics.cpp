// rldk forensics log-scan RUN (same as `rldk scan`), rldk forensics kl-drift RUN: a focused KL analysis, and
// rldk forensics diff-ckpt A B (same as `rldk ckpt diff`); doctor, compare-runs and env-audit are the same as
// `rldk doctor`, `rldk diff` and `rldk env-audit` (the older tool's names).
#include <cstdio>

#include "ckpt_command.h"
#include "commands.h"
#include "diff_command.h"
#include "doctor_command.h"
#include "report_output.h"
#include "rldk/doctor.h"
#include "rldk/reader.h"
#include "scan_command.h"

namespace rldk::cli {
namespace {

struct KlDriftOptions {
  std::vector<std::string> sources;
  bool json = false;
  size_t reference_points = 100;
  size_t recent_points = 100;
  bool fail_on_drift = false;
};

int run_kl_drift(const KlDriftOptions& opts) {
  std::vector<KlDriftReport> reports;
  int code = EXIT_OK;
  for (const auto& source : opts.sources) {
    auto runs = scan_source(source, kl_drift_scan_options(opts.reference_points, opts.recent_points), 1);
    if (!runs.ok()) {
      std::fprintf(stderr, "rldk forensics kl-drift: %s\n", to_string(runs.error()).c_str());
      code = EXIT_INPUT_ERROR;
      continue;
    }
    for (const auto& run : runs.value()) {
      reports.push_back(kl_drift_report(run, opts.reference_points, opts.recent_points));
    }
  }
  if (reports.empty()) return code;
  if (opts.json) {
    print_text(stdout, kl_drift_json(reports).dump() + "\n");
  } else {
    print_text(stdout, kl_drift_text(reports));
  }
  if (code != EXIT_OK) return code;
  bool drift = false;
  for (const auto& r : reports) drift = drift || r.drift;
  return opts.fail_on_drift && drift ? EXIT_FINDINGS : EXIT_OK;
}

}  // namespace

void add_forensics_command(CLI::App& app, int& exit_code) {
  CLI::App* forensics =
      app.add_subcommand("forensics", "Focused post-mortem analyses of a run (log-scan, kl-drift, diff-ckpt, and "
                                      "doctor, compare-runs, env-audit as in the older tool).");
  forensics->require_subcommand(1);

  auto scan_opts = std::make_shared<ScanCommandOptions>();
  CLI::App* log_scan = forensics->add_subcommand("log-scan", "Same as `rldk scan`: findings and health for a run.");
  add_scan_options(log_scan, scan_opts);
  log_scan->callback([scan_opts, &exit_code] { exit_code = run_scan_command(*scan_opts, "forensics log-scan"); });

  auto opts = std::make_shared<KlDriftOptions>();
  CLI::App* kl = forensics->add_subcommand(
      "kl-drift", "KL over the run: early vs recent level (scaled by the early noise) and the KL findings "
                  "(spikes, level shifts, drift from the early reference, controller not tracking its target).");
  kl->add_option("runs", opts->sources, "Run logs: files, folders of runs, or - for stdin")->required();
  kl->add_flag("--json", opts->json, "Print the rldk.kl-drift/v1 JSON document instead of text");
  kl->add_option("--reference-points", opts->reference_points, "Logged KL values in the early reference (default 100)")
      ->check(FinitePositive());
  kl->add_option("--recent-points", opts->recent_points, "Logged KL values in the recent window (default 100)")
      ->check(FinitePositive());
  kl->add_flag("--fail-on-drift", opts->fail_on_drift, "Exit 1 when a KL drift or level shift is found");
  kl->callback([opts, &exit_code] { exit_code = run_kl_drift(*opts); });

  auto ckpt_opts = std::make_shared<CkptDiffCliOptions>();
  CLI::App* diff_ckpt = forensics->add_subcommand("diff-ckpt", "Same as `rldk ckpt diff`: compare two checkpoints.");
  add_ckpt_diff_options(diff_ckpt, ckpt_opts);
  diff_ckpt->callback([ckpt_opts, &exit_code] { exit_code = run_ckpt_diff(*ckpt_opts, "rldk forensics diff-ckpt"); });

  auto doctor_opts = std::make_shared<DoctorOptions>();
  doctor_opts->me = "rldk forensics doctor";
  CLI::App* doctor = forensics->add_subcommand("doctor", "Same as `rldk doctor`: scan, environment audit, report card.");
  add_doctor_options(doctor, doctor_opts);
  doctor->callback([doctor_opts, &exit_code] { exit_code = run_doctor(*doctor_opts); });

  auto diff_opts = std::make_shared<DiffCliOptions>();
  diff_opts->me = "rldk forensics compare-runs";
  CLI::App* compare = forensics->add_subcommand("compare-runs", "Same as `rldk diff`: where two runs part ways.");
  add_diff_options(compare, diff_opts);
  compare->callback([diff_opts, &exit_code] { exit_code = run_diff(*diff_opts); });

  add_env_audit_subcommand(*forensics, exit_code, true);
}

}  // namespace rldk::cli
