#include "lineage_manifest.h"

#include <filesystem>

#include "json_document.h"

namespace rldk::provenance {
namespace {

std::vector<std::string> string_list(simdjson::dom::element object, std::string_view key) {
  std::vector<std::string> out;
  simdjson::dom::array items;
  if (object[key].get_array().get(items) != simdjson::SUCCESS) return out;
  for (auto item : items) {
    std::string_view text;
    if (item.get_string().get(text) == simdjson::SUCCESS) out.emplace_back(text);
  }
  return out;
}

Error malformed(const std::string& path, const std::string& what) {
  return Error{ErrorCode::unrecognized, "not an rldk lineage manifest: " + what, path};
}

}  // namespace

Result<LineageManifest> read_lineage_manifest(const std::string& path, bool missing_ok) {
  LineageManifest manifest;
  std::error_code ec;
  if (missing_ok && !std::filesystem::exists(path, ec)) return manifest;
  JsonDocument doc;
  if (auto status = load_json_document(path, doc); !status.ok()) return status.error();
  return lineage_from_document(doc, path);
}

Result<LineageManifest> lineage_from_document(const JsonDocument& doc, const std::string& path) {
  LineageManifest manifest;
  std::string schema = string_field(doc.root, "schema");
  if (schema != LINEAGE_SCHEMA) {
    return malformed(path, schema.empty() ? "no \"schema\" field" : "schema is \"" + schema + "\", expected " +
                                                                        LINEAGE_SCHEMA);
  }
  simdjson::dom::object datasets;
  if (doc.root["datasets"].get_object().get(datasets) == simdjson::SUCCESS) {
    for (auto [name, value] : datasets) {
      if (!value.is_object()) return malformed(path, "dataset \"" + std::string(name) + "\" is not an object");
      LineageDataset ds;
      ds.paths = string_list(value, "paths");
      ds.root = string_field(value, "root");
      ds.bytes = uint_field(value, "bytes");
      simdjson::dom::array files;
      if (value["files"].get_array().get(files) == simdjson::SUCCESS) {
        for (auto f : files) {
          RecordedFile file{string_field(f, "path"), uint_field(f, "bytes"), string_field(f, "hash")};
          if (file.path.empty() || file.hash.empty()) {
            return malformed(path, "a file of dataset \"" + std::string(name) + "\" has no path or hash");
          }
          ds.files.push_back(std::move(file));
        }
      }
      manifest.datasets[std::string(name)] = std::move(ds);
    }
  }
  simdjson::dom::array transforms;
  if (doc.root["transforms"].get_array().get(transforms) == simdjson::SUCCESS) {
    for (auto t : transforms) {
      LineageTransform tr;
      tr.name = string_field(t, "name");
      tr.inputs = string_list(t, "inputs");
      tr.outputs = string_list(t, "outputs");
      tr.command = string_field(t, "command");
      simdjson::dom::element script;
      if (t["script"].get(script) == simdjson::SUCCESS && script.is_object()) {
        tr.script_path = string_field(script, "path");
        tr.script_hash = string_field(script, "hash");
      }
      manifest.transforms.push_back(std::move(tr));
    }
  }
  return manifest;
}

Json lineage_manifest_json(const LineageManifest& manifest) {
  Json root;
  root["schema"] = LINEAGE_SCHEMA;
  Json datasets = Json(Json::Object{});
  for (const auto& [name, ds] : manifest.datasets) {
    Json d;
    Json::Array paths(ds.paths.begin(), ds.paths.end());
    d["paths"] = Json(std::move(paths));
    Json::Array files;
    for (const auto& f : ds.files) {
      Json file;
      file["path"] = f.path;
      file["bytes"] = f.bytes;
      file["hash"] = f.hash;
      files.push_back(std::move(file));
    }
    d["files"] = Json(std::move(files));
    d["root"] = ds.root;
    d["bytes"] = ds.bytes;
    datasets[name] = std::move(d);
  }
  root["datasets"] = std::move(datasets);
  Json::Array transforms;
  for (const auto& t : manifest.transforms) {
    Json tr;
    tr["name"] = t.name;
    tr["inputs"] = Json(Json::Array(t.inputs.begin(), t.inputs.end()));
    tr["outputs"] = Json(Json::Array(t.outputs.begin(), t.outputs.end()));
    tr["command"] = t.command;
    if (!t.script_path.empty()) {
      Json script;
      script["path"] = t.script_path;
      script["hash"] = t.script_hash;
      tr["script"] = std::move(script);
    }
    transforms.push_back(std::move(tr));
  }
  root["transforms"] = Json(std::move(transforms));
  return root;
}

}  // namespace rldk::provenance
