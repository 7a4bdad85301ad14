// Determinism check outputs: JSON (rldk.determinism/v1), terminal text, and the determinism card (Markdown, HTML).
#include <cmath>
#include <cstdio>

#include "report/env_audit_card.h"
#include "report/markdown_text.h"
#include "rldk/determinism.h"
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

std::string mode_text(const ReplicaCompareOptions& c) {
  if (c.bitwise) return "bitwise";
  return "rtol " + num(c.rtol) + ", atol " + num(c.atol);
}

std::string metric_sentence(const MetricReplicaComparison& m) {
  if (m.passed()) return "identical at " + std::to_string(m.steps_compared) + " steps";
  std::string text = "diverges at step " + std::to_string(*m.first_divergent_step) + " (replica " +
                     std::to_string(m.first_divergent_replica) +
                     (m.first_divergent_reason == "missing" ? ": step missing" : "") + "), " +
                     std::to_string(m.divergent_steps) + " of " + std::to_string(m.steps_compared) + " steps differ";
  if (m.max_abs_deviation > 0) {
    text += "; max |deviation| " + num(m.max_abs_deviation) + " at step " + std::to_string(m.max_deviation_step);
  }
  return text;
}

std::string verdict_sentence(const DeterminismReport& r) {
  std::string v = r.verdict();
  if (v == "error") {
    return r.replica_errors.empty() && !r.comparison.errors.empty() ? r.comparison.errors.front()
           : r.replica_errors.empty()                                ? "the check could not run"
                                                                     : r.replica_errors.front();
  }
  if (v == "pass") {
    return std::to_string(r.replicas) + " replicas agree (" + mode_text(r.compare) + ") on " +
           std::to_string(r.comparison.metrics.size()) + " metrics";
  }
  std::optional<int64_t> first;
  std::string names;
  for (const auto& m : r.comparison.metrics) {
    if (!m.first_divergent_step) continue;
    if (!first || *m.first_divergent_step < *first) {
      first = m.first_divergent_step;
      names = m.name;
    } else if (*m.first_divergent_step == *first) {
      names += ", " + m.name;
    }
  }
  return "replicas diverge at step " + std::to_string(first.value_or(0)) + " (" + names + ")";
}

}  // namespace

std::string DeterminismReport::verdict() const {
  if (!replica_errors.empty() || !comparison.errors.empty()) return "error";
  return comparison.passed() ? "pass" : "fail";
}

Json determinism_json(const DeterminismReport& r) {
  Json out;
  out["schema"] = DETERMINISM_SCHEMA;
  out["command"] = r.command;
  out["verdict"] = r.verdict();
  out["summary"] = verdict_sentence(r);
  Json settings;
  settings["replicas"] = static_cast<uint64_t>(r.replicas);
  settings["parallel"] = static_cast<uint64_t>(r.parallel);
  settings["timeout_seconds"] = r.timeout_seconds;
  settings["mode"] = r.compare.bitwise ? "bitwise" : "tolerance";
  settings["rtol"] = r.compare.rtol;
  settings["atol"] = r.compare.atol;
  Json metrics = Json::Array{};
  for (const auto& m : r.compare.metrics) metrics.push_back(m);
  settings["compare"] = metrics;
  Json steps = Json::Array{};
  for (int64_t s : r.compare.steps) steps.push_back(s);
  settings["steps"] = steps;
  out["settings"] = settings;
  Json env = Json::Object{};
  for (const auto& [k, v] : r.environment) env[k] = v;
  out["environment"] = env;
  Json replicas = Json::Array{};
  for (const auto& o : r.outcomes) {
    Json j;
    j["index"] = static_cast<uint64_t>(o.index);
    j["work_dir"] = o.work_dir;
    j["ok"] = o.succeeded();
    j["outcome"] = o.describe();
    j["timed_out"] = o.timed_out;
    j["exit_code"] = o.status && !o.status->signaled ? Json(o.status->code) : Json(nullptr);
    j["signal"] = o.status && o.status->signaled ? Json(signal_name(o.status->signal)) : Json(nullptr);
    j["stdout"] = o.stdout_path;
    j["stderr"] = o.stderr_path;
    replicas.push_back(j);
  }
  out["replicas"] = replicas;
  Json errors = Json::Array{};
  for (const auto& e : r.replica_errors) errors.push_back(e);
  for (const auto& e : r.comparison.errors) errors.push_back(e);
  out["errors"] = errors;
  Json ms = Json::Array{};
  for (const auto& m : r.comparison.metrics) {
    Json j;
    j["name"] = m.name;
    j["passed"] = m.passed();
    j["steps_compared"] = m.steps_compared;
    j["divergent_steps"] = m.divergent_steps;
    j["first_divergent_step"] = m.first_divergent_step ? Json(*m.first_divergent_step) : Json(nullptr);
    j["first_divergent_replica"] = m.first_divergent_step ? Json(static_cast<uint64_t>(m.first_divergent_replica))
                                                          : Json(nullptr);
    j["first_divergent_reason"] = m.first_divergent_step ? Json(m.first_divergent_reason) : Json(nullptr);
    j["max_abs_deviation"] = m.max_abs_deviation;
    j["max_rel_deviation"] = m.max_rel_deviation;
    j["max_deviation_step"] = m.max_abs_deviation > 0 ? Json(m.max_deviation_step) : Json(nullptr);
    j["max_ulp"] = m.max_ulp;
    Json spread = Json::Array{};
    for (size_t i = 0; i < m.steps.size(); ++i) {
      Json p = Json::Array{};
      p.push_back(m.steps[i]);
      p.push_back(m.spread[i]);
      spread.push_back(p);
    }
    j["spread"] = spread;
    ms.push_back(j);
  }
  out["metrics"] = ms;
  Json hints = Json::Array{};
  for (const auto& h : r.hints) {
    Json j;
    j["id"] = h.id;
    j["message"] = h.message;
    j["fix"] = h.fix;
    Json ev = Json::Array{};
    for (const auto& e : h.evidence) ev.push_back(e);
    j["evidence"] = ev;
    hints.push_back(j);
  }
  out["hints"] = hints;
  out["env_audit"] = r.env_audit ? env_audit_json(*r.env_audit) : Json(nullptr);
  return out;
}

std::string determinism_text(const DeterminismReport& r) {
  std::string v = r.verdict();
  std::string out = (v == "pass" ? "PASS" : v == "fail" ? "FAIL" : "ERROR") + std::string(": ") +
                    verdict_sentence(r) + "\n\n";
  for (const auto& o : r.outcomes) {
    out += "replica " + std::to_string(o.index) + ": " + o.describe() + "\n";
  }
  for (const auto& e : r.replica_errors) out += "error: " + e + "\n";
  for (const auto& e : r.comparison.errors) out += "error: " + e + "\n";
  if (!r.comparison.metrics.empty()) out += "\n";
  for (const auto& m : r.comparison.metrics) out += "  " + m.name + ": " + metric_sentence(m) + "\n";
  if (!r.hints.empty()) out += "\nHints:\n";
  for (const auto& h : r.hints) {
    out += "  - " + h.message + "\n    fix: " + h.fix + "\n";
    for (const auto& e : h.evidence) out += "    " + e + "\n";
  }
  return out;
}

std::string determinism_markdown(const DeterminismReport& r) {
  std::string v = r.verdict();
  std::string out = "# Determinism card\n\n**" + std::string(v == "pass" ? "PASS" : v == "fail" ? "FAIL" : "ERROR") +
                    "**: " + md_text(verdict_sentence(r)) + "\n\n";
  out += "- command: " + md_code(r.command) + "\n- replicas: " + std::to_string(r.replicas) + " (" +
         std::to_string(r.parallel) + " at a time)\n- comparison: " + mode_text(r.compare) + "\n\n";
  out += "## Replicas\n\n| replica | outcome |\n|---|---|\n";
  for (const auto& o : r.outcomes) out += "| " + std::to_string(o.index) + " | " + md_text(o.describe()) + " |\n";
  if (!r.replica_errors.empty() || !r.comparison.errors.empty()) {
    out += "\n## Errors\n\n";
    for (const auto& e : r.replica_errors) out += "- " + md_text(e) + "\n";
    for (const auto& e : r.comparison.errors) out += "- " + md_text(e) + "\n";
  }
  if (!r.comparison.metrics.empty()) {
    out += "\n## Metrics\n\n| metric | first divergent step | divergent steps | max \\|deviation\\| | max ULP |\n"
           "|---|---|---|---|---|\n";
    for (const auto& m : r.comparison.metrics) {
      out += "| " + md_code(m.name) + " | " + (m.first_divergent_step ? std::to_string(*m.first_divergent_step) : "none") +
             " | " + std::to_string(m.divergent_steps) + " / " + std::to_string(m.steps_compared) + " | " +
             num(m.max_abs_deviation) + " | " + std::to_string(m.max_ulp) + " |\n";
    }
  }
  if (!r.hints.empty()) {
    out += "\n## Hints\n\n";
    for (const auto& h : r.hints) {
      out += "- **" + md_text(h.message) + "** Fix: " + md_text(h.fix) + "\n";
      for (const auto& e : h.evidence) out += "  - " + md_code(e) + "\n";
    }
  }
  out += "\n## Environment given to every replica\n\n";
  for (const auto& [k, val] : r.environment) out += "- " + md_code(k + "=" + val) + "\n";
  if (r.env_audit) out += "\n## Environment audit\n\n" + env_audit_markdown(*r.env_audit);
  return out;
}

std::string determinism_html(const DeterminismReport& r) {
  HtmlPage page("Determinism card", r.command);
  std::string v = r.verdict();
  page.verdict(v == "pass" ? "PASS" : v == "fail" ? "FAIL" : "ERROR", verdict_sentence(r),
               v == "pass" ? ChartTone::Good : ChartTone::Critical);
  page.facts({{"command", r.command},
              {"replicas", std::to_string(r.replicas) + " (" + std::to_string(r.parallel) + " at a time)"},
              {"comparison", mode_text(r.compare)}});
  std::vector<std::vector<std::string>> rows;
  std::vector<ChartTone> tones;
  for (const auto& o : r.outcomes) {
    rows.push_back({std::to_string(o.index), o.describe(), o.work_dir});
    tones.push_back(o.succeeded() ? ChartTone::Good : ChartTone::Critical);
  }
  page.heading("Replicas");
  page.table({"replica", "outcome", "working directory"}, rows, tones);
  std::vector<std::string> errors = r.replica_errors;
  errors.insert(errors.end(), r.comparison.errors.begin(), r.comparison.errors.end());
  if (!errors.empty()) page.callout("Errors", "The check proves nothing until these are fixed.", errors,
                                    ChartTone::Critical);
  if (!r.comparison.metrics.empty()) {
    rows.clear();
    tones.clear();
    for (const auto& m : r.comparison.metrics) {
      rows.push_back({m.name, m.first_divergent_step ? std::to_string(*m.first_divergent_step) : "none",
                      std::to_string(m.divergent_steps) + " / " + std::to_string(m.steps_compared),
                      num(m.max_abs_deviation), std::to_string(m.max_ulp)});
      tones.push_back(m.passed() ? ChartTone::Good : ChartTone::Critical);
    }
    page.heading("Metrics");
    page.table({"metric", "first divergent step", "divergent steps", "max |deviation|", "max ULP"}, rows, tones);
  }
  for (const auto& h : r.hints) page.callout(h.message, "Fix: " + h.fix, h.evidence, ChartTone::Warning);
  for (const auto& m : r.comparison.metrics) {
    std::vector<double> steps;
    for (int64_t s : m.steps) steps.push_back(static_cast<double>(s));
    page.heading(m.name, 3);
    LineChart values;
    values.title = m.name + " per replica";
    values.y_label = m.name;
    for (size_t i = 0; i < m.values.size(); ++i) {
      values.series.push_back({"replica " + std::to_string(i), steps, m.values[i], i > 0});
    }
    LineChart spread;
    spread.title = m.name + ": spread across replicas (max - min) per step";
    spread.y_label = "spread";
    spread.height = 180;
    spread.series.push_back({"spread", steps, m.spread, false});
    if (m.first_divergent_step) {
      ChartMarker marker{static_cast<double>(*m.first_divergent_step),
                         "first divergence " + std::to_string(*m.first_divergent_step), ChartTone::Critical};
      values.markers.push_back(marker);
      spread.markers.push_back(marker);
    }
    page.chart(values);
    page.chart(spread);
  }
  std::vector<std::string> env;
  for (const auto& [k, val] : r.environment) env.push_back(k + "=" + val);
  page.heading("Environment given to every replica");
  page.bullet_list(env);
  if (r.env_audit) {
    page.heading("Environment audit");
    env_audit_table(page, *r.env_audit);
  }
  return page.str();
}

}  // namespace rldk
