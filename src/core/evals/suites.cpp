// Eval suites as data (data/eval_suites.yaml): probes over named columns, each with its direction, grouped under the
// older tool's suite names; `rldk evals evaluate DATA --suite NAME` measures the probes the table has columns for.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "model/embedded_data.h"
#include "report/markdown_text.h"
#include "rldk/evals.h"
#include "samples/cell_sink.h"

namespace rldk::evals {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::vector<std::string> string_list(const YAML::Node& node, const std::string& what) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsSequence()) throw std::runtime_error(what + " must be a list");
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

// Every numeric column of a table, by lower-cased name; values in row order (NaN where a row has none).
class ColumnTable final : public samples::CellSink {
 public:
  Status begin_file(const std::string&, const std::vector<samples::FileColumn>& columns, std::optional<int64_t>,
                    const std::string&) override {
    names_.clear();
    for (const auto& c : columns) names_.push_back(lower(c.name));
    return Ok{};
  }
  int column_index(std::string_view name) const override {
    std::string l = lower(name);
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == l) return static_cast<int>(i);
    }
    return -1;
  }
  int add_column(const samples::FileColumn& column) override {
    names_.push_back(lower(column.name));
    return static_cast<int>(names_.size() - 1);
  }
  void set_text(int column, std::string_view text) override {
    std::string t = lower(text);
    if (t == "true") set_number(column, 1);
    if (t == "false") set_number(column, 0);
    text_row_[names_[static_cast<size_t>(column)]] = std::move(t);
  }
  void set_number(int column, double value) override { row_[names_[static_cast<size_t>(column)]] = value; }
  void end_row(uint64_t) override {
    for (const auto& [name, value] : row_) columns[name].push_back(value);
    // Texts are kept lower-cased for the lexicon probes: eval sets are thousands of rows, not rollout dumps.
    for (auto& [name, value] : text_row_) texts[name].push_back(std::move(value));
    row_.clear();
    text_row_.clear();
    ++rows_;
  }
  uint64_t rows() const override { return rows_; }

  std::map<std::string, std::vector<double>> columns;
  std::map<std::string, std::vector<std::string>> texts;

 private:
  std::vector<std::string> names_;
  std::map<std::string, double> row_;
  std::map<std::string, std::string> text_row_;
  uint64_t rows_ = 0;
};

}  // namespace

const SuiteProbe* Suites::probe(const std::string& name) const {
  for (const auto& p : probes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const Suite* Suites::suite(const std::string& name) const {
  for (const auto& s : suites) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Result<Suites> suites_from_yaml(std::string_view text, const std::string& origin) {
  Suites out;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap() || !root["probes"].IsMap() || !root["suites"].IsMap()) {
      return Error{ErrorCode::invalid_argument, "a suites file is a mapping with 'probes' and 'suites' mappings",
                   origin};
    }
    for (const auto& entry : root["probes"]) {
      SuiteProbe p;
      p.name = entry.first.as<std::string>();
      p.columns = string_list(entry.second["columns"], "probe " + p.name + ": columns");
      p.direction = entry.second["direction"] ? entry.second["direction"].as<std::string>() : "";
      p.description = entry.second["description"] ? entry.second["description"].as<std::string>() : "";
      p.kind = entry.second["kind"] ? entry.second["kind"].as<std::string>() : "column";
      for (const auto& phrase : string_list(entry.second["phrases"], "probe " + p.name + ": phrases")) {
        p.phrases.push_back(lower(phrase));
      }
      if (p.kind != "column" && p.kind != "lexicon") {
        throw std::runtime_error("probe " + p.name + ": kind must be column or lexicon");
      }
      if (p.kind == "lexicon" && p.phrases.empty()) throw std::runtime_error("probe " + p.name + " has no phrases");
      if (p.columns.empty()) throw std::runtime_error("probe " + p.name + " names no column");
      if (p.direction != "higher" && p.direction != "lower" && p.direction != "none") {
        throw std::runtime_error("probe " + p.name + ": direction must be higher, lower or none");
      }
      out.probes.push_back(std::move(p));
    }
    for (const auto& entry : root["suites"]) {
      Suite s;
      s.name = entry.first.as<std::string>();
      s.probes = string_list(entry.second["probes"], "suite " + s.name + ": probes");
      s.not_built = string_list(entry.second["not_built"], "suite " + s.name + ": not_built");
      for (const auto& p : s.probes) {
        if (!out.probe(p)) throw std::runtime_error("suite " + s.name + " names an unknown probe '" + p + "'");
      }
      out.suites.push_back(std::move(s));
    }
  } catch (const std::exception& e) {
    return Error{ErrorCode::invalid_argument, e.what(), origin};
  }
  return out;
}

const Suites& builtin_suites() {
  static const Suites suites = [] {
    auto parsed = suites_from_yaml(embedded_file("eval_suites.yaml"), "data/eval_suites.yaml");
    if (!parsed.ok()) throw std::runtime_error(to_string(parsed.error()));
    return std::move(parsed).value();
  }();
  return suites;
}

std::string suites_markdown(const Suites& suites) {
  std::string md = "# rldk evals suites\n\n| suite | probes | not built (skipped with the reason) |\n|---|---|---|\n";
  for (const auto& s : suites.suites) {
    std::string probes, missing;
    for (const auto& p : s.probes) probes += (probes.empty() ? "" : ", ") + md_text(p);
    for (const auto& p : s.not_built) missing += (missing.empty() ? "" : ", ") + md_text(p);
    md += "| " + md_text(s.name) + " | " + probes + " | " + missing + " |\n";
  }
  md += "\n| probe | kind | better | columns (the first found is measured) | what it is |\n|---|---|---|---|---|\n";
  for (const auto& p : suites.probes) {
    std::string columns;
    for (const auto& c : p.columns) columns += (columns.empty() ? "" : ", ") + md_code(c);
    md += "| " + md_text(p.name) + " | " + p.kind + " | " + p.direction + " | " + columns + " | " +
          md_text(p.description) + " |\n";
  }
  return md;
}

Result<SuiteReport> evaluate_suite(const std::vector<std::string>& sources, const Suites& suites,
                                   const std::string& name, const BootstrapOptions& options,
                                   Diagnostics& diagnostics) {
  const Suite* suite = suites.suite(name);
  if (!suite) {
    std::string known;
    for (const auto& s : suites.suites) known += (known.empty() ? "" : ", ") + s.name;
    return Error{ErrorCode::invalid_argument, "no suite named '" + name + "' (suites: " + known + ")", ""};
  }
  ColumnTable table;
  for (const auto& source : sources) {
    Status status = samples::read_table(source, table, diagnostics);
    if (!status.ok()) return status.error();
  }
  SuiteReport r;
  r.suite = name;
  r.confidence = options.confidence;
  r.sources = sources;
  r.rows = table.rows();
  for (const auto& probe_name : suite->probes) {
    const SuiteProbe& probe = *suites.probe(probe_name);
    ProbeResult p;
    p.probe = probe.name;
    p.description = probe.description;
    p.direction = probe.direction;
    p.kind = probe.kind;
    p.status = "skipped";
    for (const auto& column : probe.columns) {
      if (probe.kind == "lexicon") {
        auto it = table.texts.find(lower(column));
        if (it == table.texts.end() || it->second.empty()) continue;
        std::vector<double> hits;
        for (const auto& text : it->second) {
          bool hit = std::any_of(probe.phrases.begin(), probe.phrases.end(),
                                 [&](const std::string& phrase) { return text.find(phrase) != std::string::npos; });
          hits.push_back(hit ? 1.0 : 0.0);
        }
        p.column = column;
        p.n = hits.size();
        p.mean = bootstrap_mean(hits, options);
        p.status = "measured";
        p.description += " [" + std::to_string(probe.phrases.size()) + " phrases]";
        break;
      }
      auto it = table.columns.find(lower(column));
      if (it == table.columns.end()) continue;
      std::vector<double> values;
      for (double v : it->second) {
        if (std::isfinite(v)) values.push_back(v);
      }
      if (values.empty()) continue;
      p.column = column;
      p.n = values.size();
      p.mean = bootstrap_mean(values, options);
      p.status = "measured";
      break;
    }
    if (p.status == "skipped") {
      std::string looked;
      for (const auto& c : probe.columns) looked += (looked.empty() ? "" : ", ") + c;
      p.reason = std::string(probe.kind == "lexicon" ? "no text column named " : "no numeric column named ") + looked;
    }
    r.probes.push_back(std::move(p));
  }
  for (const auto& missing : suite->not_built) {
    ProbeResult p;
    p.probe = missing;
    p.status = "skipped";
    p.direction = "none";
    p.reason = "the older tool's probe has no rldk evals counterpart (docs/evals.md)";
    r.probes.push_back(std::move(p));
  }
  return r;
}

Json suite_json(const SuiteReport& r) {
  Json j = Json::Object{};
  j["schema"] = EVALS_SUITE_SCHEMA;
  j["confidence"] = r.confidence;
  j["suite"] = r.suite;
  Json sources = Json::Array{};
  for (const auto& s : r.sources) sources.push_back(s);
  j["sources"] = sources;
  j["rows"] = static_cast<uint64_t>(r.rows);
  Json probes = Json::Array{};
  auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  for (const auto& p : r.probes) {
    Json x = Json::Object{};
    x["probe"] = p.probe;
    x["description"] = p.description;
    x["direction"] = p.direction;
    x["kind"] = p.kind.empty() ? "column" : p.kind;
    x["status"] = p.status;
    x["column"] = p.column.empty() ? Json(nullptr) : Json(p.column);
    x["reason"] = p.reason;
    x["n"] = static_cast<uint64_t>(p.n);
    x["mean"] = number(p.mean.estimate);
    x["ci_low"] = number(p.mean.low);
    x["ci_high"] = number(p.mean.high);
    probes.push_back(x);
  }
  j["probes"] = probes;
  return j;
}

std::string suite_markdown(const SuiteReport& r) {
  char level[32];
  std::snprintf(level, sizeof level, "%g%%", r.confidence * 100);
  std::string md = "# rldk evals evaluate --suite " + md_text(r.suite) + "\n\n" + std::to_string(r.rows) +
                   " rows. Each probe is the mean of one column with a " + level +
                   " bootstrap interval over rows; there is no overall score (it would mix directions).\n\n";
  md += "| probe | kind | better | column | n | mean | interval |\n|---|---|---|---|---|---|---|\n";
  char buf[96];
  for (const auto& p : r.probes) {
    if (p.status != "measured") continue;
    std::snprintf(buf, sizeof buf, "%.4g | [%.4g, %.4g]", p.mean.estimate, p.mean.low, p.mean.high);
    md += "| " + md_text(p.probe) + " | " + p.kind + " | " + p.direction + " | " + md_code(p.column) + " | " +
          std::to_string(p.n) + " | " + buf + " |\n";
  }
  md += "\nSkipped:\n\n";
  for (const auto& p : r.probes) {
    if (p.status == "skipped") md += "- " + md_text(p.probe) + ": " + md_text(p.reason) + "\n";
  }
  return md;
}

}  // namespace rldk::evals
