// The scan's entry points: scan_run replays a materialised run in step order through the one scan driver
// (detect::RunScanner), scan_source feeds that driver while files are read; health scores and the selection check.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "detect/run_scanner.h"
#include "detect/scan_sink.h"
#include "io/read_each_file.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

// One file's runs, scanned while it is read. A file whose points are not in step order is read again whole and
// replayed in order; what cannot be read twice (stdin, a named pipe) is read whole from the start.
Result<std::vector<SourceScan>> scan_file(const std::string& file, const ScanOptions& options) {
  ReadOptions read_options = scan_read_options();
  Diagnostics diagnostics;
  std::vector<SourceScan> out;
  std::error_code error;
  if (file != "-" && std::filesystem::is_regular_file(file, error)) {
    detect::ScanSink sink(options);
    Status read = io::read_entry(file, read_options, sink, diagnostics);
    if (!read.ok()) return read.error();
    if (sink.in_step_order()) {
      out = sink.take();
      for (SourceScan& scan : out) scan.diagnostics = diagnostics;
      return out;
    }
    diagnostics = Diagnostics{};
  }
  RunBuilder builder(read_options);
  Status read = io::read_entry(file, read_options, builder, diagnostics);
  if (!read.ok()) return read.error();
  for (Run& run : builder.take()) {
    out.push_back(scan_whole_run(run, options));
    out.back().diagnostics = diagnostics;
  }
  return out;
}

}  // namespace

std::vector<std::string> unknown_detector_names(const std::vector<std::string>& names,
                                                const DetectorCatalog& catalog) {
  std::vector<std::string> unknown;
  for (const auto& n : names) {
    bool known = std::any_of(catalog.detectors.begin(), catalog.detectors.end(),
                             [&](const DetectorSpec& d) { return n == d.id || n == d.fault || n == d.area; });
    if (!known) unknown.push_back(n);
  }
  return unknown;
}

std::vector<Finding> run_detector_on_values(const DetectorSpec& spec,
                                            const std::map<std::string, std::vector<double>>& values) {
  Run run;
  run.run_id = "test";
  for (const auto& [name, vs] : values) {
    Series s;
    s.name = name;
    for (size_t i = 0; i < vs.size(); ++i) {
      s.steps.push_back(static_cast<int64_t>(i) + 1);
      s.values.push_back(vs[i]);
      s.wall_times.push_back(NAN);
      s.segments.push_back(0);
    }
    run.series[name] = std::move(s);
  }
  DetectorCatalog one;
  one.detectors.push_back(spec);
  ScanOptions options;
  options.catalog = &one;
  return scan_run(run, options).findings;
}

Result<std::vector<SourceScan>> scan_source(const std::string& path, const ScanOptions& options, unsigned threads,
                                            const std::function<void(size_t, size_t)>& progress) {
  return io::map_each_path<SourceScan>(
      path, threads, [&](const std::string& file) { return scan_file(file, options); }, progress);
}

RunScan scan_run(const Run& run, const ScanOptions& options) { return scan_whole_run(run, options).scan; }

SourceScan scan_whole_run(const Run& run, const ScanOptions& options) {
  detect::RunScanner scanner(options, run.run_id, run.source.path);
  for (const auto& [key, value] : run.meta) scanner.meta(key, value);
  detect::replay(run, scanner);
  SourceScan out;
  out.scan = scanner.finish();
  scanner.take_series(out);
  return out;
}

double severity_weight(Severity severity) {
  switch (severity) {
    case Severity::info: return 0.05;
    case Severity::warning: return 0.25;
    case Severity::critical: return 0.6;
  }
  return 0.25;
}

HealthScores health_scores(const std::vector<Finding>& findings, const std::vector<std::string>& areas_checked,
                           int64_t first_step, int64_t last_step) {
  HealthScores h;
  for (const auto& a : areas_checked) h.areas[a] = 1.0;
  double span = static_cast<double>(std::max<int64_t>(last_step - first_step + 1, 1));
  for (const auto& f : findings) {
    double coverage = std::clamp(static_cast<double>(f.end_step - f.onset_step + 1) / span, 0.0, 1.0);
    double cost = severity_weight(f.severity) * (0.5 + 0.5 * coverage);
    auto it = h.areas.find(f.area);
    if (it == h.areas.end()) it = h.areas.emplace(f.area, 1.0).first;
    it->second *= 1.0 - cost;
    h.overall *= 1.0 - cost;
  }
  return h;
}

size_t findings_at_or_above(const std::vector<RunScan>& scans, Severity level) {
  size_t n = 0;
  for (const auto& s : scans) {
    for (const auto& f : s.findings) n += static_cast<int>(f.severity) >= static_cast<int>(level) ? 1 : 0;
  }
  return n;
}

}  // namespace rldk
