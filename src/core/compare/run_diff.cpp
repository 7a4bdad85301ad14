// rldk diff: per-signal difference statistics and first divergence of two runs.
#include <cmath>
#include <cstring>

#include "rldk/compare.h"
#include "rldk/metric_dictionary.h"

namespace rldk {

const std::vector<std::string>& diff_default_signals() {
  // The signals a learning-rate, seed or code change shows up in first, most telling first. Hyperparameter
  // schedules (policy/lr) are left out: a difference there is the cause, not a symptom (--signals lr compares it).
  static const std::vector<std::string> SIGNALS = {
      "policy/kl",          "reward/mean",    "policy/entropy",       "policy/loss",       "policy/grad_norm",
      "policy/clip_frac",   "value/loss",     "response/length_mean", "reward/std",        "train/loss",
      "pref/reward_margin", "pref/reward_accuracy", "advantage/mean", "policy/approx_kl"};
  return SIGNALS;
}

namespace {

bool bitwise_equal(double x, double y) {
  if (std::isnan(x) && std::isnan(y)) return true;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

SignalDiff diff_signal(const std::string& name, const Series& a, const Series& b, const DiffOptions& options) {
  SignalDiff out;
  out.name = name;
  StepValues va = step_values(a);
  StepValues vb = step_values(b);
  out.overridden_a = va.overridden;
  out.overridden_b = vb.overridden;
  out.aligned = align(va, vb);
  const AlignedPair& p = out.aligned;
  out.common_steps = p.steps.size();
  out.only_a = p.only_a;
  out.only_b = p.only_b;

  DivergenceOptions detector_options = options.divergence;
  if (auto it = options.sigma_by_signal.find(name); it != options.sigma_by_signal.end()) {
    detector_options.sigma = it->second;
  }
  if (const MetricInfo* info = MetricDictionary::builtin().find(name)) detector_options.healthy = info->healthy;
  DivergenceDetector detector(detector_options);
  double sum_a = 0.0, sum_b = 0.0;
  uint64_t finite_pairs = 0;
  bool have_max = false;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    double x = p.a[i], y = p.b[i];
    if (!out.first_difference_step && !bitwise_equal(x, y)) out.first_difference_step = p.steps[i];
    detector.push(p.steps[i], x, y);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    sum_a += x;
    sum_b += y;
    ++finite_pairs;
    double delta = std::fabs(y - x);
    if (!have_max || delta > out.max_abs_delta) {
      have_max = true;
      out.max_abs_delta = delta;
      out.max_abs_delta_step = p.steps[i];
      out.max_a = x;
      out.max_b = y;
    }
  }
  detector.finish();
  out.divergence = detector.result();
  if (finite_pairs > 0) {
    out.mean_a = sum_a / static_cast<double>(finite_pairs);
    out.mean_b = sum_b / static_cast<double>(finite_pairs);
    out.mean_drift = out.mean_b - out.mean_a;
  }
  return out;
}

}  // namespace

Result<DiffReport> diff_runs(const Run& a, const Run& b, const DiffOptions& options) {
  DiffReport report;
  report.path_a = a.source.path;
  report.path_b = b.source.path;
  report.run_a = a.run_id;
  report.run_b = b.run_id;
  report.segments_a = static_cast<uint32_t>(a.segments.size());
  report.segments_b = static_cast<uint32_t>(b.segments.size());

  std::vector<std::string> names = options.signals;
  if (names.empty()) {
    for (const auto& n : diff_default_signals()) {
      if (a.find(n) && b.find(n)) names.push_back(n);
    }
    if (names.empty()) {
      for (const auto& [n, s] : a.series) {
        if (b.find(n)) names.push_back(n);
      }
    }
  }
  for (const auto& name : names) {
    const Series* sa = a.find(name);
    const Series* sb = b.find(name);
    if (!sa || !sb) {
      report.missing.push_back(name + (!sa && !sb ? " (absent from both runs)" : !sa ? " (absent from A)"
                                                                                      : " (absent from B)"));
      continue;
    }
    report.signals.push_back(diff_signal(name, *sa, *sb, options));
  }
  if (report.signals.empty()) {
    std::string message = "no metric to compare: ";
    if (names.empty()) {
      message += "the two runs have no metric in common";
    } else {
      message += "none of the requested signals is in both runs";
      for (const auto& m : report.missing) message += "; " + m;
    }
    return Error{ErrorCode::invalid_argument, message, a.source.path + " vs " + b.source.path};
  }

  const SignalDiff* first = nullptr;
  for (const auto& s : report.signals) {
    const Divergence& d = s.divergence;
    if (!d.diverged) continue;
    if (!first) {
      first = &s;
      continue;
    }
    const Divergence& f = first->divergence;
    // Detection order first: an onset is an estimate (a slow drift's can be off by several steps), while the
    // detection step is when the evidence was there. Then the earlier onset, then the larger |z|.
    bool earlier = d.detected_step < f.detected_step ||
                   (d.detected_step == f.detected_step &&
                    (d.onset_step < f.onset_step ||
                     (d.onset_step == f.onset_step && std::fabs(d.z) > std::fabs(f.z))));
    if (earlier) first = &s;
  }
  if (first) report.first_signal = first->name;
  // What the runs were made of, when both recorded it: the usual answer to "why do they differ".
  auto manifest_a = provenance::manifest_beside(report.path_a);
  auto manifest_b = provenance::manifest_beside(report.path_b);
  // One manifest found for both (runs in one folder): it describes neither run alone, so nothing is claimed.
  if (manifest_a && manifest_b && *manifest_a != *manifest_b) {
    auto manifests = provenance::diff_run_manifests(*manifest_a, *manifest_b);
    if (manifests.ok()) {
      report.manifests = std::move(manifests.value());
    } else {
      report.manifest_note = "run manifests not compared: " + to_string(manifests.error());
    }
  }
  return report;
}

}  // namespace rldk
