// rldk lineage show: the dataset/transform graph of a manifest as text, Mermaid, Graphviz DOT or an HTML page.
#include <cstdio>
#include <map>
#include <string>

#include "lineage_manifest.h"
#include "rldk/html_page.h"
#include "rldk/provenance.h"

namespace rldk::provenance {
namespace {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

// The first 12 hex digits: enough to tell datasets apart by eye; the manifest keeps the whole hash.
std::string short_hash(const std::string& hash) {
  std::string hex = hash.rfind(HASH_PREFIX, 0) == 0 ? hash.substr(std::string(HASH_PREFIX).size()) : hash;
  return hex.substr(0, 12);
}

std::string dataset_caption(const LineageDataset& ds) {
  return std::to_string(ds.files.size()) + (ds.files.size() == 1 ? " file, " : " files, ") + human_bytes(ds.bytes) +
         ", " + short_hash(ds.root);
}

// Mermaid labels sit inside "..."; the quote itself has an entity form there.
std::string mermaid_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"') {
      out += "#quot;";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string dot_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}

// Nodes: datasets first (d0..), then transforms (t0..); a transform naming an unknown dataset gets a node for it.
struct Graph {
  std::map<std::string, size_t> dataset_index;
  std::vector<std::string> dataset_names;
};

Graph index_datasets(const LineageManifest& m) {
  Graph g;
  auto add = [&](const std::string& name) {
    if (g.dataset_index.emplace(name, g.dataset_names.size()).second) g.dataset_names.push_back(name);
  };
  for (const auto& [name, ds] : m.datasets) add(name);
  for (const auto& t : m.transforms) {
    for (const auto& n : t.inputs) add(n);
    for (const auto& n : t.outputs) add(n);
  }
  return g;
}

std::string caption_of(const LineageManifest& m, const std::string& name) {
  auto it = m.datasets.find(name);
  return it == m.datasets.end() ? "not recorded" : dataset_caption(it->second);
}

std::string text_graph(const LineageManifest& m) {
  std::string out = "datasets:\n";
  for (const auto& [name, ds] : m.datasets) out += "  " + name + "  (" + dataset_caption(ds) + ")\n";
  if (!m.transforms.empty()) out += "transforms:\n";
  for (const auto& t : m.transforms) {
    std::string ins, outs;
    for (const auto& n : t.inputs) ins += (ins.empty() ? "" : ", ") + n;
    for (const auto& n : t.outputs) outs += (outs.empty() ? "" : ", ") + n;
    out += "  " + t.name + ": " + (ins.empty() ? "(no inputs)" : ins) + " -> " + outs + "\n";
    if (!t.command.empty()) out += "      command: " + t.command + "\n";
    if (!t.script_path.empty()) out += "      script:  " + t.script_path + " (" + short_hash(t.script_hash) + ")\n";
  }
  return out;
}

std::string mermaid_graph(const LineageManifest& m) {
  Graph g = index_datasets(m);
  std::string out = "flowchart LR\n";
  for (size_t i = 0; i < g.dataset_names.size(); ++i) {
    const std::string& name = g.dataset_names[i];
    out += "  d" + std::to_string(i) + "[\"" + mermaid_label(name) + "<br/>" + mermaid_label(caption_of(m, name)) +
           "\"]\n";
  }
  for (size_t t = 0; t < m.transforms.size(); ++t) {
    const auto& tr = m.transforms[t];
    std::string id = "t" + std::to_string(t);
    out += "  " + id + "([\"" + mermaid_label(tr.name) + "\"])\n";
    for (const auto& n : tr.inputs) out += "  d" + std::to_string(g.dataset_index[n]) + " --> " + id + "\n";
    for (const auto& n : tr.outputs) out += "  " + id + " --> d" + std::to_string(g.dataset_index[n]) + "\n";
  }
  return out;
}

std::string dot_graph(const LineageManifest& m) {
  Graph g = index_datasets(m);
  std::string out = "digraph lineage {\n  rankdir=LR;\n  node [fontname=\"sans-serif\", fontsize=11];\n";
  for (size_t i = 0; i < g.dataset_names.size(); ++i) {
    const std::string& name = g.dataset_names[i];
    out += "  d" + std::to_string(i) + " [shape=box, label=\"" + dot_label(name) + "\\n" +
           dot_label(caption_of(m, name)) + "\"];\n";
  }
  for (size_t t = 0; t < m.transforms.size(); ++t) {
    const auto& tr = m.transforms[t];
    std::string id = "t" + std::to_string(t);
    out += "  " + id + " [shape=ellipse, label=\"" + dot_label(tr.name) + "\"];\n";
    for (const auto& n : tr.inputs) out += "  d" + std::to_string(g.dataset_index[n]) + " -> " + id + ";\n";
    for (const auto& n : tr.outputs) out += "  " + id + " -> d" + std::to_string(g.dataset_index[n]) + ";\n";
  }
  out += "}\n";
  return out;
}

}  // namespace

Result<std::string> lineage_graph(const std::string& manifest_path, GraphFormat format) {
  auto m = read_lineage_manifest(manifest_path);
  if (!m.ok()) return m.error();
  switch (format) {
    case GraphFormat::mermaid: return mermaid_graph(m.value());
    case GraphFormat::dot: return dot_graph(m.value());
    case GraphFormat::text: break;
  }
  return text_graph(m.value());
}

Result<std::string> lineage_html(const std::string& manifest_path) {
  auto read = read_lineage_manifest(manifest_path);
  if (!read.ok()) return read.error();
  const LineageManifest& m = read.value();
  Graph g = index_datasets(m);
  GraphChart chart;
  chart.title = "Data lineage";
  for (const auto& name : g.dataset_names) {
    bool recorded = m.datasets.count(name) != 0;
    chart.nodes.push_back({name, caption_of(m, name), true, recorded ? ChartTone::Info : ChartTone::Warning});
  }
  for (const auto& t : m.transforms) {
    size_t id = chart.nodes.size();
    chart.nodes.push_back({t.name, t.command, false, ChartTone::Neutral});
    for (const auto& n : t.inputs) chart.edges.emplace_back(g.dataset_index[n], id);
    for (const auto& n : t.outputs) chart.edges.emplace_back(id, g.dataset_index[n]);
  }
  HtmlPage page("Data lineage", manifest_path);
  page.graph(chart);
  page.heading("Datasets");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, ds] : m.datasets) {
    rows.push_back({name, std::to_string(ds.files.size()), human_bytes(ds.bytes), ds.root});
  }
  page.table({"dataset", "files", "size", "content root"}, rows);
  if (!m.transforms.empty()) {
    page.heading("Transforms");
    rows.clear();
    for (const auto& t : m.transforms) {
      std::string ins, outs;
      for (const auto& n : t.inputs) ins += (ins.empty() ? "" : ", ") + n;
      for (const auto& n : t.outputs) outs += (outs.empty() ? "" : ", ") + n;
      rows.push_back({t.name, ins, outs, t.command, t.script_path.empty() ? "" : t.script_path + " " + t.script_hash});
    }
    page.table({"transform", "inputs", "outputs", "command", "script"}, rows);
  }
  page.muted("Hashes are XXH3-128 over every byte; the content root covers the sorted list of (path, size, hash). "
             "`rldk lineage verify` re-hashes the files and names any that changed.");
  return page.str();
}

}  // namespace rldk::provenance
