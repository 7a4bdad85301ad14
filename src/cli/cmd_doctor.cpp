// rldk doctor RUN [--repo DIR] [--python PATH] [--out DIR]: scan + environment audit + a report card
// (doctor.json, doctor.md, doctor.html).
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "doctor_command.h"
#include "report_output.h"
#include "rldk/doctor.h"
#include "rldk/reader.h"

namespace rldk::cli {

int run_doctor(const DoctorOptions& opts) {
  // Scanned while it is read, with each metric reduced for its chart: memory does not grow with the log.
  ScanOptions scan_options;
  scan_options.chart_points = DOCTOR_CHART_POINTS;
  auto runs = scan_source(opts.source, scan_options, 1);
  if (!runs.ok()) {
    std::fprintf(stderr, "%s: %s\n", opts.me, to_string(runs.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  if (runs->size() != 1) {
    std::fprintf(stderr, "%s: %s holds %zu runs; point doctor at one run (use `rldk scan` for several)\n",
                 opts.me, opts.source.c_str(), runs->size());
    return EXIT_INPUT_ERROR;
  }
  DoctorReport report;
  report.scan = std::move(runs->front().scan);
  report.charts = std::move(runs->front().charts);
  if (opts.no_env) {
    report.audit_error = "skipped (--no-env)";
  } else {
    EnvAuditOptions audit_options;
    audit_options.repo_dir = opts.repo;
    audit_options.python = opts.python;
    auto audit = run_env_audit(audit_options);
    if (audit.ok()) {
      report.audit = std::move(audit).value();
    } else {
      report.audit_error = to_string(audit.error());
      std::fprintf(stderr, "%s: environment audit: %s\n", opts.me, report.audit_error.c_str());
    }
  }
  Json doc = doctor_json(report);
  if (!write_report_folder(opts.me, opts.out, {opts.source},
                           {{"doctor.json", doc.dump() + "\n"},
                            {"doctor.md", doctor_markdown(report)},
                            {"doctor.html", doctor_html(report)}})) {
    return EXIT_INPUT_ERROR;
  }
  if (opts.json) {
    print_text(stdout, doc.dump() + "\n");
  } else {
    std::printf("verdict: %s, %zu finding(s), overall health %.2f\n", doctor_verdict(report).c_str(),
                report.scan.findings.size(), report.scan.health.overall);
    std::printf("%s\n", doctor_headline(report).c_str());
    for (const auto& f : report.scan.findings) {
      std::printf("  [%s] %s %s steps %lld-%lld\n", severity_name(f.severity), f.detector.c_str(), f.metric.c_str(),
                  static_cast<long long>(f.onset_step), static_cast<long long>(f.end_step));
    }
    std::filesystem::path dir(opts.out);
    std::printf("wrote %s, %s, %s\n", (dir / "doctor.json").c_str(), (dir / "doctor.md").c_str(),
                (dir / "doctor.html").c_str());
  }
  if (opts.fail_on == "never") return EXIT_OK;
  Severity level = Severity::critical;
  parse_severity(opts.fail_on, level);
  return findings_at_or_above({report.scan}, level) > 0 ? EXIT_FINDINGS : EXIT_OK;
}

void add_doctor_options(CLI::App* cmd, const std::shared_ptr<DoctorOptions>& opts) {
  // --run-dir and --output-dir: the older tool's spelling of RUN and --out.
  cmd->add_option("run,--run-dir", opts->source, "Run log: a file or a folder holding one run")->required();
  cmd->add_option("--repo", opts->repo, "Repository whose Python code the audit scans for seeding/determinism");
  cmd->add_option("--python", opts->python, "Python interpreter the trainer runs under (default: $VIRTUAL_ENV or python3)");
  cmd->add_option("--out,--output-dir", opts->out, "Folder for doctor.json, doctor.md, doctor.html (default: rldk_doctor)");
  cmd->add_flag("--no-env", opts->no_env, "Skip the environment audit");
  cmd->add_flag("--json", opts->json, "Print the rldk.doctor/v1 document instead of a summary");
  cmd->add_option("--fail-on", opts->fail_on, "Exit 1 when a finding at or above this severity is found")
      ->check(CLI::IsMember({"info", "warning", "critical", "never"}));
}

void add_doctor_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand("doctor", DOCTOR_HELP);
  add_doctor_options(cmd, opts);
  cmd->callback([opts, &exit_code] { exit_code = run_doctor(*opts); });
}

}  // namespace rldk::cli
