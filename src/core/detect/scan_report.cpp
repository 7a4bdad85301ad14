// The scan's outputs: the rldk.scan/v1 JSON document (docs/schemas/rldk.scan.v1.schema.json) and a Markdown
// report, plus the explanation templates' filling.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "report/markdown_text.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

// Beyond this magnitude a fixed-point number is a wall of digits ("3095209181183996778774528.0x its recent
// level"): it is written with three significant digits instead (3.1e+24x).
constexpr double FIXED_POINT_LIMIT = 1e6;

// Numbers in explanations: %g-style with the template's precision, integers without a fraction.
std::string format_number(double v, const std::string& spec) {
  char buf[64];
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
  if (spec.size() >= 3 && spec[0] == '.' && (spec.back() == 'g' || spec.back() == 'f' || spec.back() == '%')) {
    int precision = std::atoi(spec.c_str() + 1);
    double shown = spec.back() == '%' ? v * 100.0 : v;
    if (spec.back() != 'g' && std::fabs(shown) >= FIXED_POINT_LIMIT) {
      std::snprintf(buf, sizeof buf, spec.back() == '%' ? "%.3g%%" : "%.3g", shown);
      return buf;
    }
    if (spec.back() == '%') {
      std::snprintf(buf, sizeof buf, "%.*f%%", precision, v * 100.0);
    } else {
      std::snprintf(buf, sizeof buf, spec.back() == 'g' ? "%.*g" : "%.*f", precision, v);
    }
    return buf;
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

// Markdown table cells: a pipe would end the cell.
}  // namespace

std::string fill_template(const std::string& text, const std::map<std::string, double>& values,
                          const std::map<std::string, std::string>& words) {
  std::string out;
  out.reserve(text.size() + 32);
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    std::string field = text.substr(open + 1, close - open - 1);
    std::string name = field, spec;
    if (auto colon = field.find(':'); colon != std::string::npos) {
      name = field.substr(0, colon);
      spec = field.substr(colon + 1);
    }
    if (auto v = values.find(name); v != values.end()) {
      out += format_number(v->second, spec);
    } else if (auto w = words.find(name); w != words.end()) {
      out += w->second;
    } else {
      out.append(text, open, close - open + 1);
    }
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

Json finding_json(const Finding& f) {
  Json j;
  j["detector"] = f.detector;
  j["fault"] = f.fault;
  j["area"] = f.area;
  j["severity"] = severity_name(f.severity);
  j["metric"] = f.metric;
  j["onset_step"] = f.onset_step;
  j["end_step"] = f.end_step;
  j["peak_step"] = f.peak_step;
  j["peak_value"] = f.peak_value;
  Json evidence = Json::Object{};
  // Evidence that could not be computed (a ratio over a zero baseline) is left out rather than printed as NaN.
  for (const auto& [k, v] : f.evidence) {
    if (std::isfinite(v)) evidence[k] = v;
  }
  j["evidence"] = evidence;
  j["explanation"] = f.explanation;
  Json fixes = Json::Array{};
  for (const auto& x : f.fixes) fixes.push_back(x);
  j["fixes"] = fixes;
  return j;
}

Json run_scan_json(const RunScan& scan) {
  Json r;
  r["run_id"] = scan.run_id;
  r["source"] = scan.source;
  r["steps"]["first"] = scan.first_step;
  r["steps"]["last"] = scan.last_step;
  r["steps"]["count"] = scan.step_count;
  Json findings = Json::Array{};
  for (const auto& f : scan.findings) findings.push_back(finding_json(f));
  r["findings"] = findings;
  r["health"]["overall"] = scan.health.overall;
  Json areas = Json::Object{};
  for (const auto& [a, v] : scan.health.areas) areas[a] = v;
  r["health"]["areas"] = areas;
  Json skipped = Json::Array{};
  for (const auto& s : scan.skipped) {
    Json e;
    e["detector"] = s.detector;
    e["reason"] = s.reason;
    skipped.push_back(e);
  }
  r["skipped"] = skipped;
  if (!scan.notes.empty()) {
    Json notes = Json::Array{};
    for (const auto& n : scan.notes) notes.push_back(n);
    r["notes"] = notes;
  }
  return r;
}

Json scan_json(const std::vector<RunScan>& scans) {
  Json doc;
  doc["schema"] = SCAN_SCHEMA;
  Json runs = Json::Array{};
  size_t by[3] = {0, 0, 0};
  size_t total = 0;
  for (const auto& s : scans) {
    runs.push_back(run_scan_json(s));
    for (const auto& f : s.findings) {
      ++by[static_cast<int>(f.severity)];
      ++total;
    }
  }
  doc["runs"] = runs;
  doc["summary"]["findings"] = static_cast<uint64_t>(total);
  doc["summary"]["by_severity"]["info"] = static_cast<uint64_t>(by[0]);
  doc["summary"]["by_severity"]["warning"] = static_cast<uint64_t>(by[1]);
  doc["summary"]["by_severity"]["critical"] = static_cast<uint64_t>(by[2]);
  return doc;
}

std::string scan_markdown(const std::vector<RunScan>& scans) {
  std::string md = "# rldk scan\n";
  char buf[256];
  for (const auto& s : scans) {
    md += "\n## Run " + md_code(s.run_id) + "\n\n";
    std::snprintf(buf, sizeof buf, ", steps %lld to %lld (%llu steps). Overall health %.2f.\n\n",
                  static_cast<long long>(s.first_step), static_cast<long long>(s.last_step),
                  static_cast<unsigned long long>(s.step_count), s.health.overall);
    md += "Source: " + md_code(s.source) + buf;
    if (!s.health.areas.empty()) {
      md += "| area | health |\n|---|---:|\n";
      for (const auto& [a, v] : s.health.areas) {
        std::snprintf(buf, sizeof buf, " | %.2f |\n", v);
        md += "| " + md_text(a) + buf;
      }
      md += "\n";
    }
    for (const auto& n : s.notes) md += "Note: " + md_text(n) + "\n\n";
    if (s.findings.empty()) {
      md += "No findings.\n";
    } else {
      md += "| severity | detector | metric | onset | end | peak | explanation |\n|---|---|---|---:|---:|---:|---|\n";
      for (const auto& f : s.findings) {
        std::snprintf(buf, sizeof buf, " | %lld | %lld | %s @ %lld | ", static_cast<long long>(f.onset_step),
                      static_cast<long long>(f.end_step), format_number(f.peak_value, ".4g").c_str(),
                      static_cast<long long>(f.peak_step));
        md += "| " + std::string(severity_name(f.severity)) + " | " + md_text(f.detector) + " | " + md_text(f.metric) +
              buf + md_text(f.explanation) + " |\n";
      }
      // Once per detector, at the steps of all its episodes: a bound crossed four times has one set of fixes.
      md += "\n### What to change\n";
      std::vector<std::string> order;
      std::map<std::string, std::vector<const Finding*>> by_detector;
      for (const auto& f : s.findings) {
        auto& episodes = by_detector[f.detector];
        if (episodes.empty()) order.push_back(f.detector);
        episodes.push_back(&f);
      }
      for (const auto& detector : order) {
        const auto& episodes = by_detector[detector];
        std::string steps;
        for (const Finding* f : episodes) steps += (steps.empty() ? "" : ", ") + std::to_string(f->onset_step);
        md += "\n**" + md_text(detector) + "** (step" + (episodes.size() > 1 ? "s " : " ") + steps + "):\n";
        for (const auto& x : episodes.front()->fixes) md += "- " + md_text(x) + "\n";
      }
    }
    if (!s.skipped.empty()) {
      md += "\n<details><summary>Detectors not run (" + std::to_string(s.skipped.size()) + ")</summary>\n\n";
      for (const auto& k : s.skipped) md += "- " + md_text(k.detector) + ": " + md_text(k.reason) + "\n";
      md += "\n</details>\n";
    }
  }
  return md;
}

}  // namespace rldk
