// The lineage manifest (schema rldk.lineage/v1) as plain structs: read with simdjson, written with rldk::Json.
//
//   {"schema": "rldk.lineage/v1",
//    "datasets": {"clean": {"paths": ["data/clean"], "root": "xxh3-128:..", "bytes": N,
//                           "files": [{"path": "data/clean/part-0.jsonl", "bytes": N, "hash": "xxh3-128:.."}]}},
//    "transforms": [{"name": "make clean", "inputs": ["raw"], "outputs": ["clean"], "command": "python clean.py",
//                    "script": {"path": "clean.py", "hash": "xxh3-128:.."}}]}
//
// Every path is relative to the manifest's folder ('/' separators), so a project moved or cloned elsewhere verifies.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rldk/json.h"
#include "rldk/provenance.h"
#include "rldk/result.h"

namespace rldk::provenance {

inline constexpr const char* LINEAGE_SCHEMA = "rldk.lineage/v1";

struct RecordedFile {
  std::string path;
  uint64_t bytes = 0;
  std::string hash;  // "xxh3-128:..."
};

struct LineageDataset {
  std::vector<std::string> paths;  // the roots as recorded (files or folders)
  std::vector<RecordedFile> files;
  std::string root;
  uint64_t bytes = 0;
};

struct LineageTransform {
  std::string name;
  std::vector<std::string> inputs;   // dataset names
  std::vector<std::string> outputs;  // dataset names
  std::string command;
  std::string script_path;  // empty: none recorded
  std::string script_hash;
};

struct LineageManifest {
  std::map<std::string, LineageDataset> datasets;
  std::vector<LineageTransform> transforms;
};

// A missing file is an empty manifest when `missing_ok`, else an error.
Result<LineageManifest> read_lineage_manifest(const std::string& path, bool missing_ok = false);
// The manifest in a parsed document; `path` names it in errors.
struct JsonDocument;
Result<LineageManifest> lineage_from_document(const JsonDocument& doc, const std::string& path);
Json lineage_manifest_json(const LineageManifest& manifest);

}  // namespace rldk::provenance
