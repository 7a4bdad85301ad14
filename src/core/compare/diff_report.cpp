// rldk diff outputs: JSON (rldk.diff/v1), a terminal summary, and the drift card (Markdown and HTML).
#include <cmath>
#include <cstdio>

#include "report/markdown_text.h"
#include "rldk/compare.h"
#include "rldk/html_page.h"

namespace rldk {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

std::string signed_num(double v) { return (v > 0 ? "+" : "") + num(v); }

// The card's table: four significant digits read at a glance and keep its columns narrow (the JSON has them all).
std::string short_num(double v) {
  if (!std::isfinite(v)) return num(v);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", v);
  return buffer;
}

Json divergence_json(const Divergence& d) {
  Json j;
  j["diverged"] = d.diverged;
  if (d.diverged) {
    j["onset_step"] = d.onset_step;
    j["detected_step"] = d.detected_step;
    j["kind"] = d.kind;
    j["detector"] = d.detector;
    j["magnitude"] = d.magnitude;
    j["z"] = d.z;
    j["sigma"] = d.sigma;
  }
  j["sigma_source"] = d.sigma_source;
  return j;
}

std::string divergence_sentence(const SignalDiff& s) {
  const Divergence& d = s.divergence;
  if (!d.diverged) return "no divergence";
  std::string what = d.kind == "spike"        ? "spike"
                     : d.kind == "level_shift" ? "level shift"
                     : d.kind == "offset"      ? "constant offset from the first common step"
                     : d.kind == "drift"       ? "drift"
                     : d.kind == "left_healthy_range" ? "one run beyond the metric's critical level"
                                               : "non-finite value in one run";
  std::string text = what + " from step " + std::to_string(d.onset_step);
  if (d.detected_step != d.onset_step) text += " (detected at step " + std::to_string(d.detected_step) + ")";
  if (d.kind == "left_healthy_range") text += ", B - A = " + signed_num(d.magnitude);
  else if (d.kind != "non_finite") text += ", B - A = " + signed_num(d.magnitude) + " (" + signed_num(d.z) + " sigma)";
  return text;
}

// One line per change, for the terminal: "  packages: torch 2.13.0 -> 2.13.1".
std::string manifest_summary(const provenance::ManifestDiff& diff) {
  if (diff.identical()) return "  identical: same data, code, packages, environment, config and seeds\n";
  std::string out;
  for (const auto& c : diff.changes) {
    out += "  " + c.section + ": " + c.key + "  " + (c.a.empty() ? "(absent)" : c.a) + " -> " +
           (c.b.empty() ? "(absent)" : c.b) + "\n";
  }
  return out + "  (rldk track diff A B shows the detail)\n";
}

void manifest_section(HtmlPage& page, const provenance::ManifestDiff& diff) {
  page.heading("What the runs were made of");
  if (diff.identical()) {
    page.paragraph("Both runs recorded a manifest; they agree on data, code, packages, environment, config and seeds, "
                   "so a difference in the curves comes from the run itself (nondeterminism, hardware).");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : diff.changes) {
    rows.push_back({c.section, c.key, c.a.empty() ? "(absent)" : c.a, c.b.empty() ? "(absent)" : c.b});
  }
  page.table({"section", "what", "A", "B"}, rows);
  for (const auto& c : diff.changes) {
    if (c.detail.empty()) continue;
    page.callout(c.section + ": " + c.key, "", c.detail, ChartTone::Info);
  }
}

}  // namespace

Json diff_json(const DiffReport& report, const DiffOptions& options) {
  Json out;
  out["schema"] = DIFF_SCHEMA;
  Json a, b;
  a["path"] = report.path_a;
  a["run_id"] = report.run_a;
  a["segments"] = report.segments_a;
  b["path"] = report.path_b;
  b["run_id"] = report.run_b;
  b["segments"] = report.segments_b;
  out["a"] = a;
  out["b"] = b;
  Json signals = Json::Array{};
  uint64_t diverged = 0, differing = 0;
  for (const auto& s : report.signals) {
    Json j;
    j["name"] = s.name;
    j["common_steps"] = s.common_steps;
    j["steps_only_a"] = s.only_a;
    j["steps_only_b"] = s.only_b;
    j["restart_overrides_a"] = s.overridden_a;
    j["restart_overrides_b"] = s.overridden_b;
    j["mean_a"] = s.mean_a;
    j["mean_b"] = s.mean_b;
    j["mean_drift"] = s.mean_drift;
    Json max;
    max["abs_delta"] = s.max_abs_delta;
    max["step"] = s.max_abs_delta_step;
    max["a"] = s.max_a;
    max["b"] = s.max_b;
    j["max_delta"] = max;
    j["first_difference_step"] = s.first_difference_step ? Json(*s.first_difference_step) : Json(nullptr);
    j["divergence"] = divergence_json(s.divergence);
    signals.push_back(j);
    if (s.divergence.diverged) ++diverged;
    if (s.first_difference_step) ++differing;
  }
  out["signals"] = signals;
  Json missing = Json::Array{};
  for (const auto& m : report.missing) missing.push_back(m);
  out["missing_signals"] = missing;
  Json summary;
  summary["signals_compared"] = static_cast<uint64_t>(report.signals.size());
  summary["signals_diverged"] = diverged;
  summary["signals_differing"] = differing;
  summary["verdict"] = diverged > 0 ? "diverged" : differing > 0 ? "differs_within_noise" : "identical";
  if (!report.first_signal.empty()) {
    for (const auto& s : report.signals) {
      if (s.name != report.first_signal) continue;
      Json first;
      first["signal"] = s.name;
      first["onset_step"] = s.divergence.onset_step;
      first["detected_step"] = s.divergence.detected_step;
      first["kind"] = s.divergence.kind;
      first["magnitude"] = s.divergence.magnitude;
      first["z"] = s.divergence.z;
      summary["first_divergence"] = first;
    }
  } else {
    summary["first_divergence"] = nullptr;
  }
  out["summary"] = summary;
  const DivergenceOptions& d = options.divergence;
  Json method;
  method["warmup"] = static_cast<uint64_t>(d.warmup);
  method["noise_window"] = static_cast<uint64_t>(d.noise_window);
  method["spike_z"] = d.spike_z;
  method["cusum_k"] = d.cusum_k;
  method["cusum_h"] = d.cusum_h;
  method["onset_window"] = static_cast<uint64_t>(d.onset_window);
  out["method"] = method;
  if (report.manifests) out["provenance"] = provenance::manifest_diff_json(*report.manifests);
  if (!report.manifest_note.empty()) out["provenance_note"] = report.manifest_note;
  return out;
}

std::string diff_text(const DiffReport& report) {
  std::string out = "A: " + report.path_a + " (run " + report.run_a + ")\nB: " + report.path_b + " (run " +
                    report.run_b + ")\n";
  if (report.segments_a > 1 || report.segments_b > 1) {
    out += "restarts: A has " + std::to_string(report.segments_a) + " segments, B " +
           std::to_string(report.segments_b) + "; a step logged twice takes the value of its last segment\n";
  }
  if (report.first_signal.empty()) {
    out += "\nNo signal diverged.\n";
  } else {
    for (const auto& s : report.signals) {
      if (s.name == report.first_signal) out += "\nFirst divergence: " + s.name + ": " + divergence_sentence(s) + "\n";
    }
  }
  out += "\n";
  for (const auto& s : report.signals) {
    out += s.name + "\n";
    out += "  steps       " + std::to_string(s.common_steps) + " common";
    if (s.only_a || s.only_b) {
      out += ", " + std::to_string(s.only_a) + " only in A, " + std::to_string(s.only_b) + " only in B";
    }
    out += "\n";
    if (s.common_steps > 0) {
      out += "  max |B-A|   " + num(s.max_abs_delta) + " at step " + std::to_string(s.max_abs_delta_step) + " (A " +
             num(s.max_a) + ", B " + num(s.max_b) + ")\n";
      out += "  mean drift  " + signed_num(s.mean_drift) + " (mean A " + num(s.mean_a) + ", mean B " + num(s.mean_b) +
             ")\n";
    }
    out += "  first diff  " +
           (s.first_difference_step ? "step " + std::to_string(*s.first_difference_step) : std::string("none")) + "\n";
    out += "  divergence  " + divergence_sentence(s) + "\n";
  }
  for (const auto& m : report.missing) out += "not compared: " + m + "\n";
  if (report.manifests) out += "\nwhat the runs were made of (rldk_manifest.json):\n" + manifest_summary(*report.manifests);
  if (!report.manifest_note.empty()) out += report.manifest_note + "\n";
  return out;
}

std::string diff_markdown(const DiffReport& report) {
  std::string out = "# Drift card\n\n";
  out += "- A: " + md_code(report.path_a) + " (run " + md_code(report.run_a) + ")\n- B: " + md_code(report.path_b) +
         " (run " + md_code(report.run_b) + ")\n\n";
  if (report.first_signal.empty()) {
    out += "**No signal diverged.**\n\n";
  } else {
    for (const auto& s : report.signals) {
      if (s.name == report.first_signal) {
        out += "**First divergence: " + md_code(s.name) + ": " + md_text(divergence_sentence(s)) + ".**\n\n";
      }
    }
  }
  out += "| signal | common steps | max \\|B-A\\| (step: A, B) | mean drift | first difference | divergence |\n"
         "|---|---|---|---|---|---|\n";
  for (const auto& s : report.signals) {
    out += "| " + md_code(s.name) + " | " + std::to_string(s.common_steps) + " | " + num(s.max_abs_delta) + " (" +
           std::to_string(s.max_abs_delta_step) + ": " + num(s.max_a) + ", " + num(s.max_b) + ") | " +
           signed_num(s.mean_drift) + " | " +
           (s.first_difference_step ? std::to_string(*s.first_difference_step) : std::string("none")) + " | " +
           md_text(divergence_sentence(s)) + " |\n";
  }
  if (!report.missing.empty()) {
    out += "\nNot compared:\n\n";
    for (const auto& m : report.missing) out += "- " + md_text(m) + "\n";
  }
  if (report.manifests) out += "\n" + provenance::manifest_diff_markdown(*report.manifests);
  if (!report.manifest_note.empty()) out += "\n" + md_text(report.manifest_note) + "\n";
  out += "\nMethod: d = B - A at common steps; noise from each run's step-to-step changes; spike test, two-sided "
         "CUSUM, onset by least squares (see docs/compare.md).\n";
  return out;
}

std::string diff_html(const DiffReport& report) {
  HtmlPage page("Drift card", report.path_a + "  vs  " + report.path_b);
  const SignalDiff* first = nullptr;
  for (const auto& s : report.signals) {
    if (s.name == report.first_signal) first = &s;
  }
  if (first) {
    page.verdict("DIVERGED", first->name + ": " + divergence_sentence(*first), ChartTone::Critical);
  } else {
    page.verdict("NO DIVERGENCE", "No compared signal diverged beyond the noise of the runs.", ChartTone::Good);
  }
  page.facts({{"A", report.path_a + " (run " + report.run_a + ")"},
              {"B", report.path_b + " (run " + report.run_b + ")"},
              {"signals compared", std::to_string(report.signals.size())},
              {"segments", "A " + std::to_string(report.segments_a) + ", B " + std::to_string(report.segments_b)}});
  std::vector<std::vector<std::string>> rows;
  std::vector<ChartTone> tones;
  for (const auto& s : report.signals) {
    rows.push_back({s.name, std::to_string(s.common_steps),
                    s.max_abs_delta == 0 ? "0"  // identical runs: no step to point at
                                         : short_num(s.max_abs_delta) + " at " + std::to_string(s.max_abs_delta_step),
                    (s.mean_drift > 0 ? "+" : "") + short_num(s.mean_drift),
                    s.first_difference_step ? std::to_string(*s.first_difference_step) : "none",
                    divergence_sentence(s)});
    tones.push_back(s.divergence.diverged ? ChartTone::Critical : ChartTone::Good);
  }
  page.heading("Signals");
  page.table({"signal", "common steps", "max |B-A|", "mean drift", "first difference", "divergence"}, rows, tones);
  // Before the charts: when the runs were made of different things, that is usually the explanation.
  if (report.manifests) manifest_section(page, *report.manifests);
  if (!report.manifest_note.empty()) page.muted(report.manifest_note);
  for (const auto& s : report.signals) {
    LineChart chart;
    chart.title = s.name;
    chart.y_label = s.name;
    // The legend names the runs: "A" and "B" alone send the reader back to the facts at the top.
    ChartSeries a{"A (" + report.run_a + ")", {}, s.aligned.a, false};
    ChartSeries b{"B (" + report.run_b + ")", {}, s.aligned.b, true};
    for (int64_t step : s.aligned.steps) a.steps.push_back(static_cast<double>(step));
    b.steps = a.steps;
    chart.series = {a, b};
    if (s.divergence.diverged) {
      chart.markers.push_back({static_cast<double>(s.divergence.onset_step),
                               "onset " + std::to_string(s.divergence.onset_step), ChartTone::Critical});
      if (s.divergence.detected_step != s.divergence.onset_step) {
        chart.ranges.push_back({static_cast<double>(s.divergence.onset_step),
                                static_cast<double>(s.divergence.detected_step), "onset to detection",
                                ChartTone::Warning});
      }
    }
    page.heading(s.name, 3);
    page.chart(chart);
  }
  if (!report.missing.empty()) {
    page.heading("Not compared");
    page.bullet_list(report.missing);
  }
  page.muted("d = B - A at common steps; noise scale from each run's step-to-step changes (or given); spike test, "
             "two-sided CUSUM, onset by a least-squares step/ramp fit. See docs/compare.md.");
  return page.str();
}

}  // namespace rldk
