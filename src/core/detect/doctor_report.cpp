// The doctor report card: scan findings, health tiles, environment audit and charts of the implicated metrics.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "report/env_audit_card.h"
#include "report/markdown_text.h"
#include "rldk/chart.h"
#include "rldk/doctor.h"
#include "rldk/html_page.h"

namespace rldk {
namespace {

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

ChartTone tone_of(Severity s) {
  switch (s) {
    case Severity::info: return ChartTone::Info;
    case Severity::warning: return ChartTone::Warning;
    case Severity::critical: return ChartTone::Critical;
  }
  return ChartTone::Warning;
}

ChartTone tone_of_score(double score) {
  return score >= 0.9 ? ChartTone::Good : score >= 0.6 ? ChartTone::Warning : ChartTone::Critical;
}

// Metrics to chart: each finding's metric, once, in order of first onset (the first to move comes first).
std::vector<std::string> implicated_metrics(const RunScan& scan) {
  std::vector<std::string> out;
  for (const auto& f : scan.findings) {
    if (std::find(out.begin(), out.end(), f.metric) == out.end()) out.push_back(f.metric);
  }
  return out;
}

LineChart chart_for(const std::map<std::string, ChartSeries>& charts, const RunScan& scan,
                    const std::string& metric) {
  LineChart c;
  c.title = metric;
  c.y_label = metric;
  if (auto it = charts.find(metric); it != charts.end()) c.series.push_back(it->second);
  // Findings that overlap share one band (the union of their episodes, in the worst one's colour): stacked
  // translucent bands would darken into an opaque block that hides the line they are about.
  std::vector<const Finding*> episodes;
  for (const auto& f : scan.findings) {
    if (f.metric != metric) continue;
    episodes.push_back(&f);
    c.markers.push_back({static_cast<double>(f.onset_step), f.detector + " @ " + std::to_string(f.onset_step),
                         tone_of(f.severity)});
  }
  std::sort(episodes.begin(), episodes.end(),
            [](const Finding* a, const Finding* b) { return a->onset_step < b->onset_step; });
  int64_t band_end = 0;
  Severity band_severity = Severity::info;
  for (const Finding* f : episodes) {
    std::string label = f->detector + " (" + severity_name(f->severity) + ")";
    if (!c.ranges.empty() && f->onset_step <= band_end) {
      ChartRange& band = c.ranges.back();
      band_end = std::max(band_end, f->end_step);
      band.end_step = static_cast<double>(band_end);
      band.label += ", " + label;
      if (static_cast<int>(f->severity) > static_cast<int>(band_severity)) band_severity = f->severity;
      band.tone = tone_of(band_severity);
      continue;
    }
    band_end = f->end_step;
    band_severity = f->severity;
    c.ranges.push_back({static_cast<double>(f->onset_step), static_cast<double>(f->end_step), label,
                        tone_of(f->severity)});
  }
  return c;
}

}  // namespace

std::string doctor_verdict(const DoctorReport& r) {
  bool critical = false, warning = false;
  for (const auto& f : r.scan.findings) {
    critical = critical || f.severity == Severity::critical;
    warning = warning || f.severity == Severity::warning;
  }
  if (r.audit) {
    critical = critical || r.audit->status() == CheckStatus::fail;
    warning = warning || r.audit->status() == CheckStatus::warn;
  }
  return critical ? "fail" : warning ? "warn" : "pass";
}

namespace {

std::string title_of(const Finding& f) {
  const DetectorSpec* spec = builtin_detector_catalog().find(f.detector);
  return spec != nullptr && !spec->title.empty() ? spec->title : f.detector;
}

}  // namespace

// What went wrong and when it started, in one or two sentences: the first finding of warning level or worse (the
// findings are in onset order; notes come before the trouble often enough that the first finding is not it) and the
// worst one. Shared by the Markdown, HTML and JSON reports.
std::string doctor_headline(const DoctorReport& r) {
  const RunScan& s = r.scan;
  std::string out;
  if (s.findings.empty()) {
    out = "No training failures found in " + std::to_string(s.step_count) + " steps.";
  } else {
    const Finding* first = nullptr;
    const Finding* worst = &s.findings.front();
    size_t notes = 0;
    for (const auto& f : s.findings) {
      if (f.severity == Severity::info) ++notes;
      if (first == nullptr && f.severity != Severity::info) first = &f;
      if (static_cast<int>(f.severity) > static_cast<int>(worst->severity)) worst = &f;
    }
    if (first == nullptr) {
      out = std::to_string(notes) + (notes == 1 ? " note" : " notes") +
            ", nothing at warning level: the run's own course explains what moved.";
    } else {
      out = "It went wrong from step " + std::to_string(first->onset_step) + ": " + title_of(*first) + " (" +
            first->detector + " on " + first->metric + ").";
      if (worst != first && worst->detector == first->detector && worst->metric == first->metric) {
        out += " It turned " + std::string(severity_name(worst->severity)) + " from step " +
               std::to_string(worst->onset_step) + ".";
      } else if (worst != first) {
        out += " The worst: " + title_of(*worst) + " (" + severity_name(worst->severity) + ", " + worst->detector +
               " on " + worst->metric + ", from step " + std::to_string(worst->onset_step) + ").";
      }
      size_t trouble = s.findings.size() - notes;
      out += " " + std::to_string(trouble) + (trouble == 1 ? " finding" : " findings") + " at warning level or worse";
      out += notes > 0 ? ", " + std::to_string(notes) + (notes == 1 ? " note." : " notes.") : ".";
    }
  }
  // A WARN or FAIL verdict over "no failures" reads as a contradiction unless it says where the verdict comes from.
  if (r.audit && (r.audit->status() == CheckStatus::warn || r.audit->status() == CheckStatus::fail)) {
    std::string ids;
    for (const auto& c : r.audit->checks) {
      if (c.status == CheckStatus::warn || c.status == CheckStatus::fail) ids += (ids.empty() ? "" : ", ") + c.id;
    }
    out += " The environment audit found a problem: " + ids + " (below).";
  }
  return out;
}

Json doctor_json(const DoctorReport& r) {
  Json doc;
  doc["schema"] = DOCTOR_SCHEMA;
  doc["verdict"] = doctor_verdict(r);
  doc["headline"] = doctor_headline(r);
  doc["scan"] = run_scan_json(r.scan);
  if (r.audit) {
    doc["env_audit"] = env_audit_json(*r.audit);
  } else {
    doc["env_audit"] = nullptr;
    doc["env_audit_error"] = r.audit_error;
  }
  return doc;
}

std::string doctor_markdown(const DoctorReport& r) {
  std::string verdict = doctor_verdict(r);
  std::string md = "# rldk doctor: " + md_text(r.scan.run_id) + "\n\nVerdict: **" + verdict + "**. ";
  md += md_text(doctor_headline(r)) + " Overall health " + fixed(r.scan.health.overall) + ".\n";
  md += "\n" + scan_markdown({r.scan}).substr(std::string("# rldk scan\n").size());
  md += "\n## Environment audit\n\n";
  if (r.audit) {
    md += env_audit_markdown(*r.audit);
  } else {
    md += "Not run: " + r.audit_error + "\n";
  }
  return md;
}

std::string doctor_html(const DoctorReport& r) {
  const RunScan& s = r.scan;
  HtmlPage page("rldk doctor: " + s.run_id, s.source);
  std::string verdict = doctor_verdict(r);
  std::string headline = doctor_headline(r);
  page.verdict(verdict == "fail" ? "FAIL" : verdict == "warn" ? "WARN" : "PASS", headline,
               verdict == "fail" ? ChartTone::Critical : verdict == "warn" ? ChartTone::Warning : ChartTone::Good);
  page.facts({{"run", s.run_id},
              {"source", s.source},
              {"steps", std::to_string(s.first_step) + " to " + std::to_string(s.last_step) + " (" +
                            std::to_string(s.step_count) + ")"},
              {"detectors not run", std::to_string(s.skipped.size()) + " (metrics missing)"}});

  page.heading("Health");
  std::vector<HtmlPage::Tile> tiles;
  tiles.push_back({"overall", fixed(s.health.overall), "1.00 = no findings", tone_of_score(s.health.overall)});
  for (const auto& [area, score] : s.health.areas) tiles.push_back({area, fixed(score), "", tone_of_score(score)});
  page.tiles(tiles);
  page.muted("Each finding costs weight x (0.5 + 0.5 x share of the run it covers), weights info 0.05, warning 0.25, "
             "critical 0.6; an area's score is the product of (1 - cost) over its findings (docs/detectors.md).");

  page.heading("Findings");
  if (s.findings.empty()) {
    page.paragraph("No detector found an anomalous episode.");
  } else {
    std::vector<std::vector<std::string>> rows;
    std::vector<ChartTone> tones;
    for (const auto& f : s.findings) {
      char peak[64];
      std::snprintf(peak, sizeof peak, "%.4g @ %lld", f.peak_value, static_cast<long long>(f.peak_step));
      rows.push_back({severity_name(f.severity), f.detector, f.metric, std::to_string(f.onset_step),
                      std::to_string(f.end_step), peak, f.explanation});
      tones.push_back(tone_of(f.severity));
    }
    page.table({"severity", "detector", "metric", "onset", "end", "peak", "explanation"}, rows, tones);
  }

  auto metrics = implicated_metrics(s);
  if (!metrics.empty()) page.heading("Implicated metrics");
  for (const auto& m : metrics) page.chart(chart_for(r.charts, s, m));

  if (!s.findings.empty()) {
    page.heading("What to change");
    std::set<std::string> shown;
    for (const auto& f : s.findings) {
      if (!shown.insert(f.detector).second) continue;
      page.callout(f.detector + " (from step " + std::to_string(f.onset_step) + ")", f.explanation, f.fixes,
                   tone_of(f.severity));
    }
  }

  page.heading("Environment audit");
  if (!r.audit) {
    page.paragraph("Not run: " + r.audit_error);
  } else {
    env_audit_table(page, *r.audit);
  }
  if (!s.skipped.empty()) {
    std::vector<std::string> items;
    for (const auto& k : s.skipped) items.push_back(k.detector + ": " + k.reason);
    page.heading("Detectors not run", 3);
    page.bullet_list(items);
  }
  return page.str();
}

}  // namespace rldk
