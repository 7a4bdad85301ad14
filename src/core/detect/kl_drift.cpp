// `rldk forensics kl-drift`: the KL detectors of the catalog plus a plain early-vs-late comparison, so a person
// sees both the numbers and the episodes. Unlike the older tool's histogram divergence of the first 500 against
// the last 100 steps, the comparison is scaled by the early noise and only the detectors decide "drift".
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "detect/streaming.h"
#include "rldk/doctor.h"
#include "stats/robust.h"

namespace rldk {

ScanOptions kl_drift_scan_options(size_t reference_points, size_t recent_points) {
  ScanOptions options;
  options.only = {"kl"};
  options.edge_points = std::max<size_t>({reference_points, recent_points, 1});
  return options;
}

KlDriftReport kl_drift_report(const SourceScan& source, size_t reference_points, size_t recent_points) {
  KlDriftReport r;
  r.run_id = source.scan.run_id;
  r.findings = source.scan.findings;
  r.drift = std::any_of(r.findings.begin(), r.findings.end(),
                        [](const Finding& f) { return f.fault == "kl_drift" || f.fault == "kl_level_shift"; });
  const SeriesEdges* kl = nullptr;
  for (const char* name : {"policy/kl", "policy/approx_kl", "policy/kl_seq"}) {
    auto it = source.edges.find(name);
    if (it == source.edges.end()) continue;
    kl = &it->second;
    r.metric = name;
    break;
  }
  if (kl == nullptr) return r;
  size_t n_ref = std::min(reference_points, kl->head_values.size());
  std::vector<double> ref(kl->head_values.begin(), kl->head_values.begin() + static_cast<std::ptrdiff_t>(n_ref));
  size_t n_recent = std::min(recent_points, kl->tail_values.size());
  size_t from = kl->tail_values.size() - n_recent;
  double sum = 0;
  for (size_t i = kl->tail_values.size(); i-- > from;) sum += kl->tail_values[i];  // newest first, as always summed
  if (n_recent > 0) {
    r.recent_first = kl->tail_steps[from];
    r.recent_last = kl->tail_steps.back();
  }
  if (!ref.empty()) {
    r.reference_mean = stats::mean(ref);
    r.reference_first = kl->head_steps.front();
    r.reference_last = kl->head_steps[n_ref - 1];
    double median = 0;
    stats::median_and_sigma(ref, median, r.reference_sigma);
  }
  r.recent_mean = n_recent ? sum / static_cast<double>(n_recent) : detect::NaN;
  r.ratio = r.reference_mean != 0 ? r.recent_mean / r.reference_mean : detect::NaN;
  r.change_sigma = r.reference_sigma > 0 ? (r.recent_mean - r.reference_mean) / r.reference_sigma : detect::NaN;
  return r;
}

KlDriftReport kl_drift_report(const Run& run, size_t reference_points, size_t recent_points) {
  return kl_drift_report(scan_whole_run(run, kl_drift_scan_options(reference_points, recent_points)), reference_points,
                         recent_points);
}

Json kl_drift_json(const std::vector<KlDriftReport>& reports) {
  Json doc;
  doc["schema"] = KL_DRIFT_SCHEMA;
  Json runs = Json::Array{};
  for (const auto& r : reports) {
    Json j;
    j["run_id"] = r.run_id;
    j["metric"] = r.metric;
    j["drift_detected"] = r.drift;
    if (!r.metric.empty()) {
      j["reference"]["first_step"] = r.reference_first;
      j["reference"]["last_step"] = r.reference_last;
      j["reference"]["mean"] = r.reference_mean;
      j["reference"]["sigma"] = r.reference_sigma;
      j["recent"]["first_step"] = r.recent_first;
      j["recent"]["last_step"] = r.recent_last;
      j["recent"]["mean"] = r.recent_mean;
      if (std::isfinite(r.ratio)) j["ratio"] = r.ratio;
      if (std::isfinite(r.change_sigma)) j["change_sigma"] = r.change_sigma;
    }
    Json findings = Json::Array{};
    for (const auto& f : r.findings) findings.push_back(finding_json(f));
    j["findings"] = findings;
    runs.push_back(j);
  }
  doc["runs"] = runs;
  return doc;
}

std::string kl_drift_text(const std::vector<KlDriftReport>& reports) {
  std::string out;
  char buf[512];
  for (const auto& r : reports) {
    out += "run " + r.run_id + "\n";
    if (r.metric.empty()) {
      out += "  no KL metric (policy/kl, policy/approx_kl or policy/kl_seq) in this run\n";
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "  %s: early mean %.4g (steps %lld-%lld, sigma %.3g), recent mean %.4g (steps %lld-%lld): "
                  "%.2fx, %+.1f sigma\n",
                  r.metric.c_str(), r.reference_mean, static_cast<long long>(r.reference_first),
                  static_cast<long long>(r.reference_last), r.reference_sigma, r.recent_mean,
                  static_cast<long long>(r.recent_first), static_cast<long long>(r.recent_last), r.ratio,
                  r.change_sigma);
    out += buf;
    out += r.drift ? "  drift: yes\n" : "  drift: no\n";
    for (const auto& f : r.findings) {
      std::snprintf(buf, sizeof buf, "  [%s] %s steps %lld-%lld: ", severity_name(f.severity), f.detector.c_str(),
                    static_cast<long long>(f.onset_step), static_cast<long long>(f.end_step));
      out += buf + f.explanation + "\n";
    }
    if (r.findings.empty()) out += "  no KL findings\n";
  }
  return out;
}

}  // namespace rldk
