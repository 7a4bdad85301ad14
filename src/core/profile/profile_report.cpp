// rldk.profile/v1 JSON, Markdown and the compute card (HTML with SVG plots) of a ProfileReport.
#include <cmath>
#include <cstdio>

#include "report/markdown_text.h"
#include "rldk/chart.h"
#include "rldk/html_page.h"
#include "rldk/profile.h"

namespace rldk {
namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g", v);
  return buffer;
}

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

std::string verdict_text(const ProfileReport& r) {
  for (const auto& m : r.memory) {
    if (m.leak) {
      std::string text = m.metric + " grows " + num(m.growth_gb_per_1k_steps) + " GB per 1k steps (" +
                         num(m.first_gb) + " -> " + num(m.last_gb) + " GB)";
      if (m.steps_to_limit) text += "; reaches " + num(r.options.memory_limit_gb) + " GB in about " +
                                    num(*m.steps_to_limit) + " more steps";
      return text;
    }
  }
  if (!r.drops.empty()) return std::to_string(r.drops.size()) + " throughput drop(s), first at step " +
                               std::to_string(r.drops.front().step);
  return "no memory leak and no throughput drop found";
}

}  // namespace

Json profile_json(const ProfileReport& r) {
  Json doc;
  doc["schema"] = PROFILE_SCHEMA;
  doc["source"] = r.source;
  doc["run_id"] = r.run_id;
  doc["leak"] = r.leak();
  Json memory = Json::Array{};
  for (const auto& m : r.memory) {
    Json j;
    j["metric"] = m.metric;
    j["points"] = static_cast<uint64_t>(m.points);
    j["first_step"] = m.first_step;
    j["last_step"] = m.last_step;
    j["first_gb"] = m.first_gb;
    j["last_gb"] = m.last_gb;
    j["peak_gb"] = m.peak_gb;
    j["growth_gb_per_1k_steps"] = m.growth_gb_per_1k_steps;
    j["late_growth_gb_per_1k_steps"] = m.late_growth_gb_per_1k_steps;
    j["slope_p_value"] = m.slope_p_value;
    j["shape"] = m.shape;
    j["leak"] = m.leak;
    j["steps_to_limit"] = m.steps_to_limit ? Json(*m.steps_to_limit) : Json(nullptr);
    j["reason"] = m.reason;
    memory.push_back(j);
  }
  doc["memory"] = memory;
  Json time;
  time["step_time_metric"] = r.step_time_metric;
  time["mean_step_seconds"] = finite_or_null(r.mean_step_seconds);
  Json parts = Json::Array{};
  for (const auto& p : r.time_parts) {
    Json j;
    j["metric"] = p.metric;
    j["mean_seconds"] = p.mean_seconds;
    j["share"] = p.share;
    parts.push_back(j);
  }
  time["parts"] = parts;
  doc["time"] = time;
  Json tp;
  tp["metric"] = r.throughput_metric;
  tp["mean"] = finite_or_null(r.mean_throughput);
  Json drops = Json::Array{};
  for (const auto& d : r.drops) {
    Json j;
    j["step"] = d.step;
    j["value"] = d.value;
    j["baseline"] = d.baseline;
    drops.push_back(j);
  }
  tp["drops"] = drops;
  doc["throughput"] = tp;
  doc["tokens_per_second"] = finite_or_null(r.tokens_per_second);
  doc["mfu"] = finite_or_null(r.mfu);
  Json notes = Json::Array{};
  for (const auto& n : r.notes) notes.push_back(n);
  doc["notes"] = notes;
  return doc;
}

std::string profile_markdown(const ProfileReport& r) {
  std::string out = "# Compute profile: " + md_text(r.run_id.empty() ? r.source : r.run_id) + "\n\n";
  out += "**" + std::string(r.leak() ? "LEAK" : "OK") + "**: " + md_text(verdict_text(r)) + "\n\n";
  if (!r.memory.empty()) {
    out += "## Memory\n\n| metric | first GB | last GB | GB per 1k steps | last third | shape | steps to limit |\n"
           "|---|---|---|---|---|---|---|\n";
    for (const auto& m : r.memory) {
      out += "| " + md_code(m.metric) + " | " + num(m.first_gb) + " | " + num(m.last_gb) + " | " +
             num(m.growth_gb_per_1k_steps) + " | " + num(m.late_growth_gb_per_1k_steps) + " | " + m.shape +
             (m.leak ? " (leak)" : "") + " | " + (m.steps_to_limit ? num(*m.steps_to_limit) : "-") + " |\n";
    }
    out += "\n";
  }
  if (!r.step_time_metric.empty() || !r.time_parts.empty()) {
    out += "## Step time\n\n";
    if (!r.step_time_metric.empty()) {
      out += "Mean step: " + num(r.mean_step_seconds) + " s (" + md_code(r.step_time_metric) + ")\n\n";
    }
    if (!r.time_parts.empty()) {
      out += "| part | mean s | share |\n|---|---|---|\n";
      for (const auto& p : r.time_parts) {
        out += "| " + md_code(p.metric) + " | " + num(p.mean_seconds) + " | " + num(100 * p.share) + "% |\n";
      }
      out += "\n";
    }
  }
  if (!r.throughput_metric.empty()) {
    out += "## Throughput\n\nMean " + md_code(r.throughput_metric) + ": " + num(r.mean_throughput) + "\n\n";
    for (const auto& d : r.drops) {
      out += "- drop at step " + std::to_string(d.step) + ": " + num(d.value) + " vs " + num(d.baseline) +
             " before\n";
    }
    if (!r.drops.empty()) out += "\n";
  }
  if (std::isfinite(r.tokens_per_second)) out += "Tokens/s: " + num(r.tokens_per_second) + "\n\n";
  if (std::isfinite(r.mfu)) out += "MFU: " + num(r.mfu) + "\n\n";
  for (const auto& n : r.notes) out += "- not measured: " + md_text(n) + "\n";
  return out;
}

std::string profile_html(const ProfileReport& r, const Run& run) {
  HtmlPage page("Compute card", r.source);
  page.verdict(r.leak() ? "LEAK" : (r.drops.empty() ? "OK" : "DROPS"), verdict_text(r),
               r.leak() ? ChartTone::Critical : (r.drops.empty() ? ChartTone::Good : ChartTone::Warning));
  for (const auto& m : r.memory) {
    page.heading(m.metric);
    page.paragraph(m.shape + (m.leak ? " (leak)" : "") + ": " + m.reason + ". Whole run " +
                   num(m.growth_gb_per_1k_steps) + " GB per 1k steps, last third " +
                   num(m.late_growth_gb_per_1k_steps) + ".");
    LineChart chart;
    chart.title = m.metric;
    chart.y_label = "GB";
    ChartSeries s;
    s.label = "logged";
    for (size_t i = 0; i < m.steps.size(); ++i) {
      s.steps.push_back(static_cast<double>(m.steps[i]));
      s.values.push_back(m.values_gb[i]);
    }
    chart.series.push_back(std::move(s));
    if (std::isfinite(r.options.memory_limit_gb)) {
      chart.thresholds.push_back({r.options.memory_limit_gb, "limit", ChartTone::Critical});
    }
    page.chart(chart);
  }
  if (!r.time_parts.empty()) {
    page.heading("Step time");
    BarChart bars;
    bars.title = "Mean seconds per step, by part";
    bars.value_label = "seconds";
    for (const auto& p : r.time_parts) bars.bars.push_back({p.metric, p.mean_seconds, ChartTone::Info});
    page.bars(bars);
  }
  if (!r.throughput_metric.empty()) {
    page.heading("Throughput");
    LineChart chart;
    chart.title = r.throughput_metric;
    if (const Series* s = run.find(r.throughput_metric)) {
      ChartSeries line;
      line.label = r.throughput_metric;
      for (size_t i = 0; i < s->size(); ++i) {
        line.steps.push_back(static_cast<double>(s->steps[i]));
        line.values.push_back(s->values[i]);
      }
      chart.series.push_back(std::move(line));
    }
    for (const auto& d : r.drops) chart.markers.push_back({static_cast<double>(d.step), "drop", ChartTone::Warning});
    page.chart(chart);
  }
  std::vector<std::pair<std::string, std::string>> facts;
  if (!r.step_time_metric.empty()) facts.emplace_back("mean step (s)", num(r.mean_step_seconds));
  if (std::isfinite(r.tokens_per_second)) facts.emplace_back("tokens/s", num(r.tokens_per_second));
  if (std::isfinite(r.mfu)) facts.emplace_back("MFU", num(r.mfu));
  if (!facts.empty()) page.facts(facts);
  if (!r.notes.empty()) page.bullet_list(r.notes);
  return page.str();
}

}  // namespace rldk
