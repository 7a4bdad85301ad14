// run_env_audit and the renderings of its result (JSON schema rldk.env-audit/v1, Markdown).
#include <filesystem>

#include "report/markdown_text.h"
#include "rldk/env_audit.h"

namespace rldk {
namespace {

Json strings(const std::vector<std::string>& items) {
  Json a = Json::Array{};
  for (const auto& s : items) a.push_back(s);
  return a;
}

Json string_map(const std::map<std::string, std::string>& m) {
  Json o = Json::Object{};
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

}  // namespace

std::string_view check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::skip: return "skip";
    case CheckStatus::pass: return "pass";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
  }
  return "fail";
}

CheckStatus EnvAudit::status() const {
  CheckStatus worst = CheckStatus::pass;
  for (const auto& c : checks) worst = std::max(worst, c.status);
  return worst;
}

size_t EnvAudit::count(CheckStatus status) const {
  size_t n = 0;
  for (const auto& c : checks) n += c.status == status ? 1 : 0;
  return n;
}

Result<EnvAudit> run_env_audit(const EnvAuditOptions& options) {
  EnvAudit audit;
  audit.repo_dir = options.repo_dir;
  if (!options.repo_dir.empty()) {
    auto scan = scan_repository_code(options.repo_dir, options);
    if (!scan.ok()) return scan.error();
    audit.code = std::move(scan.value());
  }
  if (options.probe_python) audit.python = probe_python_environment(options);
  audit.environment = relevant_environment(options.environment);
  audit.checks = evaluate_env_checks(audit.python, audit.environment, audit.code ? &*audit.code : nullptr,
                                     !options.python.empty());
  return audit;
}

Json env_audit_json(const EnvAudit& audit) {
  Json j;
  j["schema"] = "rldk.env-audit/v1";
  j["status"] = std::string(check_status_name(audit.status()));
  Json counts;
  for (CheckStatus s : {CheckStatus::skip, CheckStatus::pass, CheckStatus::warn, CheckStatus::fail}) {
    counts[std::string(check_status_name(s))] = static_cast<uint64_t>(audit.count(s));
  }
  j["counts"] = counts;
  j["repo_dir"] = audit.repo_dir.empty() ? Json(nullptr) : Json(audit.repo_dir);
  const PythonEnvironment& py = audit.python;
  Json p;
  p["probed"] = py.probed;
  p["interpreter"] = py.interpreter;
  p["error"] = py.error;
  p["python_version"] = py.python_version;
  p["executable"] = py.executable;
  p["platform"] = py.platform;
  p["versions"] = string_map(py.versions);
  p["import_errors"] = string_map(py.import_errors);
  p["torch"] = string_map(py.torch);
  p["devices"] = strings(py.devices);
  p["packages"] = strings(py.packages);
  p["packages_digest"] = py.packages_digest;
  j["python"] = p;
  j["environment"] = string_map(audit.environment);
  if (audit.code) {
    Json c;
    c["files_scanned"] = static_cast<uint64_t>(audit.code->files_scanned);
    c["files_skipped"] = static_cast<uint64_t>(audit.code->files_skipped);
    c["truncated"] = audit.code->truncated;
    c["skipped"] = strings(audit.code->skipped);
    c["imports"] = strings(audit.code->imports);
    Json ev = Json::Array{};
    for (const auto& e : audit.code->evidence) {
      Json item;
      item["kind"] = e.kind;
      item["location"] = e.location;
      item["snippet"] = e.snippet;
      ev.push_back(item);
    }
    c["evidence"] = ev;
    j["code"] = c;
  } else {
    j["code"] = nullptr;
  }
  Json checks = Json::Array{};
  for (const auto& c : audit.checks) {
    Json item;
    item["id"] = c.id;
    item["category"] = c.category;
    item["status"] = std::string(check_status_name(c.status));
    item["summary"] = c.summary;
    item["evidence"] = strings(c.evidence);
    item["fix"] = c.fix;
    checks.push_back(item);
  }
  j["checks"] = checks;
  return j;
}

std::string env_audit_markdown(const EnvAudit& audit) {
  std::string md = "## Environment audit: " + std::string(check_status_name(audit.status())) + "\n\n";
  md += std::to_string(audit.count(CheckStatus::pass)) + " pass, " + std::to_string(audit.count(CheckStatus::warn)) +
        " warn, " + std::to_string(audit.count(CheckStatus::fail)) + " fail, " +
        std::to_string(audit.count(CheckStatus::skip)) + " skipped";
  if (audit.code) {
    md += "; " + std::to_string(audit.code->files_scanned) + " Python files scanned in " + md_code(audit.repo_dir);
    if (audit.code->files_skipped > 0) md += ", " + std::to_string(audit.code->files_skipped) + " not scanned";
  }
  md += ".\n\n| Check | Status | Finding |\n|---|---|---|\n";
  for (const auto& c : audit.checks) {
    md += "| " + md_code(c.id) + " | " + std::string(check_status_name(c.status)) + " | " + md_text(c.summary) + " |\n";
  }
  bool header = false;
  for (const auto& c : audit.checks) {
    if (c.status != CheckStatus::warn && c.status != CheckStatus::fail) continue;
    if (!header) {
      md += "\n### What to fix\n";
      header = true;
    }
    md += "\n**" + md_code(c.id) + "** (" + std::string(check_status_name(c.status)) + "): " + md_text(c.summary) + "\n\n";
    for (const auto& e : c.evidence) md += "- " + md_code(e) + "\n";
    if (!c.fix.empty()) md += (c.evidence.empty() ? "" : "\n") + std::string("Fix: ") + md_text(c.fix) + "\n";
  }
  if (audit.code && !audit.code->skipped.empty()) {
    md += "\n### Files not scanned\n\n";
    for (const auto& s : audit.code->skipped) md += "- " + md_text(s) + "\n";
    if (audit.code->files_skipped > audit.code->skipped.size()) {
      md += "- and " + std::to_string(audit.code->files_skipped - audit.code->skipped.size()) + " more\n";
    }
  }
  return md;
}

}  // namespace rldk
