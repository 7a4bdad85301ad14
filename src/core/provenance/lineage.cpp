// rldk lineage record / verify: datasets by content (every byte of every file), and the transforms between them.
#include <algorithm>
#include <filesystem>
#include <map>

#include "lineage_manifest.h"
#include "model/json_text.h"
#include "rldk/output_file.h"
#include "rldk/provenance.h"

namespace fs = std::filesystem;

namespace rldk::provenance {
namespace {

fs::path manifest_folder(const std::string& manifest_path) {
  return fs::absolute(manifest_path).lexically_normal().parent_path();
}

// `path` (as the user typed it, relative to the working folder) as stored: relative to the manifest's folder.
std::string stored_path(const std::string& path, const fs::path& folder) {
  fs::path rel = fs::absolute(path).lexically_normal().lexically_relative(folder);
  std::string text = rel.generic_string();
  if (!text.empty() && text.back() == '/') text.pop_back();
  return text.empty() ? "." : text;
}

std::string default_name(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  std::string name = p.filename().string();
  return name.empty() || name == "." ? fs::absolute(path).lexically_normal().parent_path().filename().string() : name;
}

Result<LineageDataset> hash_dataset(const std::vector<std::string>& paths, const fs::path& folder, unsigned threads) {
  auto tree = hash_tree(paths, folder.string(), threads);
  if (!tree.ok()) return tree.error();
  LineageDataset ds;
  for (const auto& p : paths) ds.paths.push_back(stored_path(p, folder));
  for (const auto& f : tree->files) ds.files.push_back({f.path, f.bytes, f.hash.text()});
  ds.root = tree->root.text();
  ds.bytes = tree->bytes;
  return ds;
}

}  // namespace

Result<LineageRecorded> lineage_record(const std::string& manifest_path, const LineageRecordOptions& options) {
  if (options.paths.empty()) return Error{ErrorCode::invalid_argument, "give the dataset's files or folders", ""};
  auto read = read_lineage_manifest(manifest_path, /*missing_ok=*/true);
  if (!read.ok()) return read.error();
  LineageManifest manifest = std::move(read.value());
  const fs::path folder = manifest_folder(manifest_path);
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    return Error{ErrorCode::not_found, "the manifest's folder does not exist", folder.string()};
  }

  const std::string name = options.name.empty() ? default_name(options.paths.front()) : options.name;
  auto dataset = hash_dataset(options.paths, folder, options.threads);
  if (!dataset.ok()) return dataset.error();

  std::vector<std::string> input_names;
  for (const auto& input : options.inputs) {
    if (manifest.datasets.count(input) != 0 && !fs::exists(input, ec)) {
      input_names.push_back(input);
      continue;
    }
    if (!fs::exists(input, ec)) {
      return Error{ErrorCode::not_found, "an input is neither a dataset in the manifest nor a file or folder", input};
    }
    auto in = hash_dataset({input}, folder, options.threads);
    if (!in.ok()) return in.error();
    std::string in_name = default_name(input);
    manifest.datasets[in_name] = std::move(in.value());
    input_names.push_back(in_name);
  }
  LineageRecorded recorded{name, dataset->files.size(), dataset->bytes, dataset->root, {}};
  manifest.datasets[name] = std::move(dataset.value());

  if (!options.inputs.empty() || !options.command.empty() || !options.script.empty()) {
    LineageTransform t;
    t.name = options.transform.empty() ? "make " + name : options.transform;
    t.inputs = input_names;
    t.outputs = {name};
    t.command = options.command;
    if (!options.script.empty()) {
      auto script = hash_file(options.script);
      if (!script.ok()) return script.error();
      t.script_path = stored_path(options.script, folder);
      t.script_hash = script->hash.text();
    }
    auto same = std::find_if(manifest.transforms.begin(), manifest.transforms.end(),
                             [&](const LineageTransform& x) { return x.name == t.name; });
    if (same != manifest.transforms.end()) {
      *same = std::move(t);
    } else {
      manifest.transforms.push_back(std::move(t));
    }
  }

  recorded.manifest = lineage_manifest_json(manifest);
  if (auto written = write_file_atomic(manifest_path, recorded.manifest.dump(2) + "\n"); !written.ok()) {
    return written.error();
  }
  return recorded;
}

Result<LineageVerification> lineage_verify(const std::string& manifest_path, unsigned threads) {
  auto read = read_lineage_manifest(manifest_path);
  if (!read.ok()) return read.error();
  const LineageManifest& manifest = read.value();
  const fs::path folder = manifest_folder(manifest_path);
  LineageVerification out;
  out.manifest = manifest_path;
  out.datasets = manifest.datasets.size();

  for (const auto& [name, ds] : manifest.datasets) {
    // Roots that vanished whole are not an error here: every file recorded under them is reported as removed.
    std::vector<std::string> present;
    std::error_code ec;
    for (const auto& p : ds.paths) {
      fs::path abs = (folder / p).lexically_normal();
      if (fs::exists(abs, ec)) present.push_back(abs.string());
    }
    std::map<std::string, FileDigest> now;
    if (!present.empty()) {
      auto tree = hash_tree(present, folder.string(), threads);
      if (!tree.ok()) return tree.error();
      for (auto& f : tree->files) now.emplace(f.path, std::move(f));
    }
    out.files += ds.files.size();
    for (const auto& recorded : ds.files) {
      auto it = now.find(recorded.path);
      if (it == now.end()) {
        out.changes.push_back({name, recorded.path, "removed", recorded.bytes, 0, recorded.hash, ""});
        continue;
      }
      std::string hash = it->second.hash.text();
      if (hash != recorded.hash || it->second.bytes != recorded.bytes) {
        out.changes.push_back({name, recorded.path, "changed", recorded.bytes, it->second.bytes, recorded.hash, hash});
      }
      now.erase(it);
    }
    for (const auto& [path, f] : now) out.changes.push_back({name, path, "added", 0, f.bytes, "", f.hash.text()});
  }
  std::sort(out.changes.begin(), out.changes.end(), [](const FileChange& x, const FileChange& y) {
    return std::tie(x.dataset, x.path) < std::tie(y.dataset, y.path);
  });

  for (const auto& t : manifest.transforms) {
    if (t.script_path.empty()) continue;
    auto script = hash_file((folder / t.script_path).lexically_normal().string());
    if (!script.ok()) {
      out.scripts_changed.push_back(t.name + ": " + t.script_path + " is missing");
    } else if (script->hash.text() != t.script_hash) {
      out.scripts_changed.push_back(t.name + ": " + t.script_path + " changed");
    }
  }
  return out;
}

Json lineage_verification_json(const LineageVerification& v) {
  Json j;
  j["schema"] = "rldk.lineage-verify/v1";
  j["manifest"] = v.manifest;
  j["datasets"] = static_cast<uint64_t>(v.datasets);
  j["files"] = static_cast<uint64_t>(v.files);
  j["ok"] = v.ok();
  Json::Array changes;
  for (const auto& c : v.changes) {
    Json x;
    x["dataset"] = c.dataset;
    x["path"] = c.path;
    x["change"] = c.change;
    x["bytes_before"] = c.bytes_before;
    x["bytes_after"] = c.bytes_after;
    x["hash_before"] = c.hash_before.empty() ? Json() : Json(c.hash_before);
    x["hash_after"] = c.hash_after.empty() ? Json() : Json(c.hash_after);
    changes.push_back(std::move(x));
  }
  j["changes"] = Json(std::move(changes));
  j["scripts_changed"] = Json(Json::Array(v.scripts_changed.begin(), v.scripts_changed.end()));
  return j;
}

std::string lineage_verification_text(const LineageVerification& v) {
  std::string out;
  if (v.ok()) {
    out = "lineage ok: " + std::to_string(v.files) + " files in " + std::to_string(v.datasets) +
          " datasets match " + v.manifest + "\n";
    return out;
  }
  size_t changed = 0, added = 0, removed = 0;
  for (const auto& c : v.changes) {
    (c.change == "changed" ? changed : c.change == "added" ? added : removed)++;
  }
  out = "lineage CHANGED (" + v.manifest + "): " + std::to_string(changed) + " changed, " + std::to_string(added) +
        " added, " + std::to_string(removed) + " removed";
  if (!v.scripts_changed.empty()) out += ", " + std::to_string(v.scripts_changed.size()) + " scripts changed";
  out += "\n";
  for (const auto& c : v.changes) {
    out += "  " + c.change + std::string(8 - std::min<size_t>(c.change.size(), 7), ' ') + c.dataset + ": " + c.path;
    if (c.change == "changed") {
      out += " (" + std::to_string(c.bytes_before) + " -> " + std::to_string(c.bytes_after) + " bytes)";
    }
    out += "\n";
  }
  for (const auto& s : v.scripts_changed) out += "  script  " + s + "\n";
  return out;
}

}  // namespace rldk::provenance
