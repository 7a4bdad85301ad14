// rldk track diff: what changed between two runs' manifests (schema rldk.run-manifest/v1, written by rldk.tracking).
//
// Both documents are flattened to (path -> canonical JSON value) leaves and compared leaf by leaf, section by
// section. Lists of records keyed by "path" or "name" (dataset files, model tensors) and lists of strings (untracked
// files) are matched by key, not by position, so one added file is one change rather than a shifted list. Fields
// that differ between any two runs by nature (ids, times, status) are not compared.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "run_manifest.h"
#include "rldk/provenance.h"
#include "rldk/terminal_text.h"

namespace fs = std::filesystem;

namespace rldk::provenance {
namespace {

constexpr const char* RUN_MANIFEST_SCHEMA_PREFIX = "rldk.run-manifest/";
constexpr size_t MAX_DETAIL_LINES = 40;  // per change; the JSON says how many more there were
constexpr size_t MAX_VALUE_CHARS = 100;  // in detail lines; whole values stay in "a"/"b"

// Top-level fields that describe the run's identity or timing, not what it was made of.
const std::set<std::string> NOT_COMPARED = {"schema", "experiment_id", "experiment_name", "status", "tags",
                                            "started_at", "finished_at", "timings", "notes"};
// Sections whose entries are named things compared as a whole, with the differing leaves as detail.
const std::set<std::string> ENTITY_SECTIONS = {"datasets", "models", "tokenizers"};
// Order of sections in the report: what most often explains a difference first.
const std::vector<std::string> SECTION_ORDER = {"datasets", "git", "packages", "config", "seeds", "models",
                                                "tokenizers", "env_vars", "environment", "metadata"};

using Leaves = std::map<std::string, std::string>;

std::string key_of(simdjson::dom::element item) {
  std::string_view key;
  if (item.is_object()) {
    if (item["path"].get_string().get(key) == simdjson::SUCCESS) return std::string(key);
    if (item["name"].get_string().get(key) == simdjson::SUCCESS) return std::string(key);
  }
  return {};
}

void flatten(simdjson::dom::element value, const std::string& path, Leaves& out) {
  if (value.is_object()) {
    bool any = false;
    for (auto [k, v] : object_of(value)) {
      flatten(v, path.empty() ? std::string(k) : path + "/" + std::string(k), out);
      any = true;
    }
    if (!any && !path.empty()) out[path] = "{}";  // an empty section is no leaf at all
    return;
  }
  if (value.is_array()) {
    auto items = array_of(value);
    bool keyed = items.size() > 0, strings = items.size() > 0;
    for (auto item : items) {
      keyed = keyed && !key_of(item).empty();
      strings = strings && item.is_string();
    }
    if (keyed) {
      for (auto item : items) {
        std::string key = key_of(item);
        for (auto [k, v] : object_of(item)) {
          if (k == "path" || k == "name") continue;
          flatten(v, path + "[" + key + "]/" + std::string(k), out);
        }
        out.emplace(path + "[" + key + "]", "present");
      }
      return;
    }
    if (strings) {
      for (auto item : items) out[path + "[" + std::string(item.get_string().value_unsafe()) + "]"] = "present";
      return;
    }
  }
  out[path] = canonical_json(value);
}

std::string clip(const std::string& text) {
  if (text.size() <= MAX_VALUE_CHARS) return text;
  return text.substr(0, MAX_VALUE_CHARS) + "...";
}

// Leaves that differ, as "path: a -> b" lines.
std::vector<std::string> leaf_differences(const Leaves& a, const Leaves& b) {
  std::vector<std::string> out;
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      out.push_back(ia->first + ": only in A" + (ia->second == "present" ? "" : " (" + clip(ia->second) + ")"));
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      out.push_back(ib->first + ": only in B" + (ib->second == "present" ? "" : " (" + clip(ib->second) + ")"));
      ++ib;
    } else {
      if (ia->second != ib->second) out.push_back(ia->first + ": " + clip(ia->second) + " -> " + clip(ib->second));
      ++ia;
      ++ib;
    }
  }
  return out;
}

// A "[key]" entry with sub-leaves collapses to one line per key, so a changed file reads "files[x]" once.
std::vector<std::string> collapse_keyed(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& line : lines) {
    size_t close = line.find("]/");
    size_t colon = line.find(": ");
    if (close != std::string::npos && close < colon) {
      std::string head = line.substr(0, close + 1);
      if (seen.insert(head).second) out.push_back(head + " differs");
      continue;
    }
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> limit(std::vector<std::string> lines) {
  if (lines.size() > MAX_DETAIL_LINES) {
    size_t more = lines.size() - MAX_DETAIL_LINES;
    lines.resize(MAX_DETAIL_LINES);
    lines.push_back("... and " + std::to_string(more) + " more");
  }
  return lines;
}

// The changed lines of a patch ("+..."/"-..." but not the "+++"/"---" file headers), with their file.
std::multiset<std::string> patch_lines(std::string_view patch) {
  std::multiset<std::string> out;
  std::string file;
  size_t pos = 0;
  while (pos < patch.size()) {
    size_t end = patch.find('\n', pos);
    if (end == std::string_view::npos) end = patch.size();
    std::string_view line = patch.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("+++ ", 0) == 0) {
      file = std::string(line.substr(4));
      if (file.rfind("b/", 0) == 0) file = file.substr(2);
    } else if (line.rfind("--- ", 0) == 0) {
      continue;
    } else if (!line.empty() && (line[0] == '+' || line[0] == '-')) {
      out.insert(file + ": " + std::string(line));
    } else if (line.rfind("Binary files ", 0) == 0) {
      out.insert(std::string(line));
    }
  }
  return out;
}

std::vector<std::string> patch_differences(const std::string& a, const std::string& b) {
  auto la = patch_lines(a), lb = patch_lines(b);
  std::vector<std::string> only_a, only_b, out;
  std::set_difference(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(only_a));
  std::set_difference(lb.begin(), lb.end(), la.begin(), la.end(), std::back_inserter(only_b));
  for (const auto& l : only_a) out.push_back("only in A's uncommitted changes: " + clip(l));
  for (const auto& l : only_b) out.push_back("only in B's uncommitted changes: " + clip(l));
  if (out.empty()) out.push_back("the patches differ in context lines only");
  return out;
}

}  // namespace

Status check_run_manifest(const JsonDocument& doc, const std::string& context) {
  std::string schema = string_field(doc.root, "schema");
  if (schema.rfind(RUN_MANIFEST_SCHEMA_PREFIX, 0) != 0) {
    return Error{ErrorCode::unrecognized,
                 "not an rldk run manifest (schema \"" + schema + "\"; rldk.tracking writes rldk.run-manifest/v1)",
                 context};
  }
  return Ok{};
}

namespace {

// The manifest's sections as flattened leaves: environment/packages and environment/env_vars are sections of
// their own (the two most common culprits), the rest of environment is "environment".
// Named things (a dataset, a model) keep their leaves apart, keyed inside the entity ("files[x]/hash"): a name may
// hold '/' itself (a model "Qwen/Qwen2-0.5B").
using Entities = std::map<std::string, Leaves>;

struct Sections {
  std::map<std::string, Leaves> flat;
  std::map<std::string, Entities> entities;
};

Sections sections_of(simdjson::dom::element root) {
  Sections out;
  for (auto [key, value] : object_of(root)) {
    std::string k(key);
    if (NOT_COMPARED.count(k) != 0) continue;
    if (ENTITY_SECTIONS.count(k) != 0) {
      Entities& entities = out.entities[k];
      if (value.is_object()) {
        for (auto [name, entity] : object_of(value)) flatten(entity, "", entities[std::string(name)]);
      } else {
        flatten(value, "", entities["(not an object)"]);  // hand-edited; still compared, never dropped
      }
      continue;
    }
    if (k == "environment" && value.is_object()) {
      for (auto [ek, ev] : object_of(value)) {
        std::string e(ek);
        if (e == "packages" || e == "env_vars") {
          flatten(ev, "", out.flat[e]);
        } else {
          flatten(ev, e, out.flat["environment"]);
        }
      }
      continue;
    }
    flatten(value, "", out.flat[k]);
  }
  return out;
}

// The name of an entity's summary hash: what a/b show for a changed dataset or model.
std::string entity_summary(const Leaves& leaves) {
  for (const char* field : {"hash", "weights_hash", "root"}) {
    auto it = leaves.find(field);
    if (it != leaves.end()) return it->second;
  }
  return "{}";
}

void diff_entities(const std::string& section, const Entities& a, const Entities& b,
                   std::vector<ManifestChange>& out) {
  std::set<std::string> names;
  for (const auto& [name, leaves] : a) names.insert(name);
  for (const auto& [name, leaves] : b) names.insert(name);
  const Leaves none;
  for (const auto& name : names) {
    auto ia = a.find(name), ib = b.find(name);
    const Leaves& la = ia == a.end() ? none : ia->second;
    const Leaves& lb = ib == b.end() ? none : ib->second;
    if (ia != a.end() && ib != b.end() && la == lb) continue;
    ManifestChange c{section, name, ia == a.end() ? "" : entity_summary(la), ib == b.end() ? "" : entity_summary(lb),
                     {}};
    if (ia != a.end() && ib != b.end()) c.detail = limit(collapse_keyed(leaf_differences(la, lb)));
    out.push_back(std::move(c));
  }
}

void diff_leaves(const std::string& section, const Leaves& a, const Leaves& b, std::vector<ManifestChange>& out) {
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      out.push_back({section, ia->first, ia->second, "", {}});
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      out.push_back({section, ib->first, "", ib->second, {}});
      ++ib;
    } else {
      if (ia->second != ib->second) out.push_back({section, ia->first, ia->second, ib->second, {}});
      ++ia;
      ++ib;
    }
  }
}

void diff_git(const Leaves& a, const Leaves& b, std::vector<ManifestChange>& out) {
  Leaves ra, rb;
  for (const auto& [k, v] : a) {
    if (k != "patch" && k != "patch_hash") ra[k] = v;
  }
  for (const auto& [k, v] : b) {
    if (k != "patch" && k != "patch_hash") rb[k] = v;
  }
  diff_leaves("git", ra, rb, out);
  auto pa = a.find("patch"), pb = b.find("patch");
  std::string patch_a = pa == a.end() ? "\"\"" : pa->second, patch_b = pb == b.end() ? "\"\"" : pb->second;
  if (patch_a == patch_b) return;
  // The leaves hold canonical JSON; unquote the patch text through simdjson to get its lines back.
  auto unquote = [](const std::string& json) {
    simdjson::dom::parser parser;
    std::string_view text;
    if (parser.parse(simdjson::padded_string(json)).get_string().get(text) != simdjson::SUCCESS) return json;
    return std::string(text);
  };
  std::string ta = unquote(patch_a), tb = unquote(patch_b);
  ManifestChange c{"git", "patch", std::to_string(ta.size()) + " bytes", std::to_string(tb.size()) + " bytes", {}};
  c.detail = limit(patch_differences(ta, tb));
  out.push_back(std::move(c));
}

}  // namespace

std::optional<std::string> manifest_beside(const std::string& log_path) {
  std::error_code ec;
  fs::path p(log_path);
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / RUN_MANIFEST_FILE, ec)) return (p / RUN_MANIFEST_FILE).string();
    return std::nullopt;
  }
  if (p.filename() == RUN_MANIFEST_FILE) return log_path;
  fs::path folder = fs::absolute(p, ec).parent_path();
  for (int up = 0; up < 2 && !folder.empty(); ++up, folder = folder.parent_path()) {  // its folder, and one up
    if (fs::exists(folder / RUN_MANIFEST_FILE, ec)) return (folder / RUN_MANIFEST_FILE).string();
  }
  return std::nullopt;
}

Result<std::string> find_run_manifest(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error{ErrorCode::not_found, "no such file or folder", path};
  if (auto found = manifest_beside(path)) return *found;
  if (!fs::is_directory(path, ec) && fs::path(path).extension() == ".json") return path;  // a manifest renamed
  return Error{ErrorCode::not_found,
               std::string("no ") + RUN_MANIFEST_FILE + " here, beside it or one folder up (rldk.tracking writes it)",
               path};
}

Result<ManifestDiff> diff_run_manifests(const std::string& a_path, const std::string& b_path) {
  auto fa = find_run_manifest(a_path);
  if (!fa.ok()) return fa.error();
  auto fb = find_run_manifest(b_path);
  if (!fb.ok()) return fb.error();
  JsonDocument a, b;
  for (auto [path, doc] : {std::pair{&fa.value(), &a}, std::pair{&fb.value(), &b}}) {
    if (auto s = load_json_document(*path, *doc); !s.ok()) return s.error();
    if (auto s = check_run_manifest(*doc, *path); !s.ok()) return s.error();
  }
  ManifestDiff diff;
  diff.a = fa.value();
  diff.b = fb.value();
  diff.changes = compare_run_manifests(a, b);
  return diff;
}

std::vector<ManifestChange> compare_run_manifests(const JsonDocument& a, const JsonDocument& b) {
  Sections sa = sections_of(a.root), sb = sections_of(b.root);
  std::vector<std::string> order = SECTION_ORDER;
  for (const auto* side : {&sa, &sb}) {
    for (const auto& [name, leaves] : side->flat) {
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    }
  }
  std::vector<ManifestChange> changes;
  const Leaves empty;
  const Entities no_entities;
  for (const auto& section : order) {
    if (ENTITY_SECTIONS.count(section) != 0) {
      diff_entities(section, sa.entities.count(section) ? sa.entities.at(section) : no_entities,
                    sb.entities.count(section) ? sb.entities.at(section) : no_entities, changes);
      continue;
    }
    const Leaves& la = sa.flat.count(section) ? sa.flat.at(section) : empty;
    const Leaves& lb = sb.flat.count(section) ? sb.flat.at(section) : empty;
    if (section == "git") {
      diff_git(la, lb, changes);
    } else {
      diff_leaves(section, la, lb, changes);
    }
  }
  return changes;
}

Json manifest_diff_json(const ManifestDiff& diff) {
  Json j;
  j["schema"] = "rldk.track-diff/v1";
  j["a"] = diff.a;
  j["b"] = diff.b;
  j["identical"] = diff.identical();
  Json::Array changes;
  for (const auto& c : diff.changes) {
    Json x;
    x["section"] = c.section;
    x["key"] = c.key;
    x["a"] = c.a.empty() ? Json() : Json(c.a);
    x["b"] = c.b.empty() ? Json() : Json(c.b);
    x["detail"] = Json(Json::Array(c.detail.begin(), c.detail.end()));
    changes.push_back(std::move(x));
  }
  j["changes"] = Json(std::move(changes));
  return j;
}

namespace {

std::string describe(const ManifestChange& c) {
  if (c.a.empty()) return c.key + ": only in B (" + clip(c.b) + ")";
  if (c.b.empty()) return c.key + ": only in A (" + clip(c.a) + ")";
  return c.key + ": " + clip(c.a) + " -> " + clip(c.b);
}

}  // namespace

std::string manifest_diff_text(const ManifestDiff& diff) {
  std::string out = "A: " + terminal_safe(diff.a) + "\nB: " + terminal_safe(diff.b) + "\n";
  if (diff.identical()) return out + "no differences: same data, code, packages, environment, config and seeds\n";
  out += std::to_string(diff.changes.size()) + (diff.changes.size() == 1 ? " change\n" : " changes\n");
  std::string section;
  for (const auto& c : diff.changes) {
    if (c.section != section) {
      section = c.section;
      out += "\n" + section + ":\n";
    }
    out += "  " + terminal_safe(describe(c)) + "\n";
    for (const auto& d : c.detail) out += "      " + terminal_safe(d) + "\n";
  }
  return out;
}

std::string manifest_diff_markdown(const ManifestDiff& diff) {
  auto code = [](const std::string& text) {
    std::string t = text;
    std::replace(t.begin(), t.end(), '`', '\'');
    std::replace(t.begin(), t.end(), '\n', ' ');
    std::string cell;
    for (char ch : t) cell += ch == '|' ? std::string("\\|") : std::string(1, ch);  // a pipe would end the cell
    return "`" + cell + "`";
  };
  std::string out = "### What changed between the runs\n\n";
  out += "A: " + code(diff.a) + "  \nB: " + code(diff.b) + "\n\n";
  if (diff.identical()) return out + "Same data, code, packages, environment, config and seeds.\n";
  out += "| section | what | A | B |\n|---|---|---|---|\n";
  for (const auto& c : diff.changes) {
    out += "| " + c.section + " | " + code(c.key) + " | " + (c.a.empty() ? "—" : code(clip(c.a))) + " | " +
           (c.b.empty() ? "—" : code(clip(c.b))) + " |\n";
  }
  for (const auto& c : diff.changes) {
    if (c.detail.empty()) continue;
    out += "\n" + code(c.section + " " + c.key) + ":\n";
    for (const auto& d : c.detail) out += "- " + code(d) + "\n";
  }
  return out;
}

}  // namespace rldk::provenance
