// Provenance: what a run was made of. Content hashes of files, folders and in-memory buffers (every byte, never a
// sample), data lineage manifests (datasets by content, and the transforms between them), and the difference between
// two runs' manifests (data, code, packages, environment, config, seeds, models).
//
// Hashes are XXH3-128 (xxHash): 128 bits make an accidental collision between two datasets negligible, and it runs
// well above disk and memory bandwidth. They are written "xxh3-128:<32 hex digits>" (the canonical big-endian form
// that xxhash's own tools and Python's xxhash.xxh3_128_hexdigest print), so a manifest says which function made it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk::provenance {

inline constexpr const char* HASH_PREFIX = "xxh3-128:";

struct ContentHash {
  uint64_t high = 0;
  uint64_t low = 0;
  std::string hex() const;   // 32 lower-case hex digits
  std::string text() const;  // "xxh3-128:" + hex()
  bool operator==(const ContentHash&) const = default;
};

// Streaming XXH3-128: update() any number of times, digest() at any point (it does not end the stream).
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  ContentHasher(ContentHasher&&) noexcept;
  ContentHasher& operator=(ContentHasher&&) noexcept;

  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  ContentHash digest() const;
  uint64_t bytes() const { return bytes_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  uint64_t bytes_ = 0;
};

ContentHash hash_bytes(const void* data, size_t size);

struct FileDigest {
  std::string path;  // as given, or relative to the tree's base ('/' separators)
  uint64_t bytes = 0;
  ContentHash hash;
};

// Every byte of one file.
Result<FileDigest> hash_file(const std::string& path);

// Many files hashed in parallel (threads = 0: one per core), results in the order given. A file that cannot be read
// fails the whole call with its path named.
Result<std::vector<FileDigest>> hash_files(const std::vector<std::string>& paths, unsigned threads = 0);

// The files under `paths` (files, or folders walked recursively; hidden entries and symlinked folders included as
// found, in byte order of their paths), hashed in parallel. Paths in the result are relative to `base` when given
// (and lie under it), else as found.
struct TreeDigest {
  std::vector<FileDigest> files;  // sorted by path
  ContentHash root;               // Merkle root over the sorted (path, size, hash) list: see tree_root()
  uint64_t bytes = 0;
};
Result<TreeDigest> hash_tree(const std::vector<std::string>& paths, const std::string& base = {}, unsigned threads = 0);

// The root of a sorted file list: XXH3-128 over one line "<hash hex> <size> <path>\n" per file. One level is enough
// to name every changed file (the list is in the manifest); the root answers "is anything different" in one compare.
ContentHash tree_root(const std::vector<FileDigest>& sorted_files);

Json file_digest_json(const FileDigest& file);
Json tree_digest_json(const TreeDigest& tree);

// ---- Data lineage (rldk lineage) -------------------------------------------------------------------------------

struct LineageRecordOptions {
  std::vector<std::string> paths;   // files or folders that make up the dataset
  std::string name;                 // dataset name; empty: the last component of the first path
  std::vector<std::string> inputs;  // datasets it was made from: names already in the manifest, or paths to hash
  std::string command;              // how it was made (recorded as given)
  std::string script;               // the script that made it (hashed)
  std::string transform;            // transform name; empty: "make <name>"
  unsigned threads = 0;
};

// Hashes the dataset (and any input given as a path) and writes it into the manifest at `manifest_path` (created, or
// updated in place: a dataset of the same name is replaced). Paths are stored relative to the manifest's folder.
struct LineageRecorded {
  std::string name;  // the dataset recorded
  size_t files = 0;
  uint64_t bytes = 0;
  std::string root;
  Json manifest;     // the whole manifest as written
};
Result<LineageRecorded> lineage_record(const std::string& manifest_path, const LineageRecordOptions& options);

struct FileChange {
  std::string dataset;
  std::string path;
  std::string change;  // "changed", "added", "removed"
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  std::string hash_before;
  std::string hash_after;
};

struct LineageVerification {
  std::string manifest;
  size_t datasets = 0;
  size_t files = 0;
  std::vector<FileChange> changes;   // sorted by dataset, then path
  std::vector<std::string> scripts_changed;  // transforms whose script's bytes differ (or vanished)
  bool ok() const { return changes.empty() && scripts_changed.empty(); }
};

// Re-hashes every dataset in the manifest and names each file that changed, appeared or vanished.
Result<LineageVerification> lineage_verify(const std::string& manifest_path, unsigned threads = 0);
Json lineage_verification_json(const LineageVerification& verification);
std::string lineage_verification_text(const LineageVerification& verification);

// The dataset/transform graph of a manifest: plain text, Mermaid, Graphviz DOT, or an HTML page with an SVG drawing.
enum class GraphFormat { text, mermaid, dot };
Result<std::string> lineage_graph(const std::string& manifest_path, GraphFormat format);
Result<std::string> lineage_html(const std::string& manifest_path);

// ---- Run manifests (rldk track diff) ---------------------------------------------------------------------------

inline constexpr const char* RUN_MANIFEST_FILE = "rldk_manifest.json";

struct ManifestChange {
  std::string section;  // datasets, models, tokenizers, git, packages, env_vars, environment, seeds, config, metadata
  std::string key;
  std::string a;        // value in A as JSON text; empty when absent
  std::string b;
  std::vector<std::string> detail;  // e.g. the files of a dataset that differ, the patch lines only one side has
};

struct ManifestDiff {
  std::string a;
  std::string b;
  std::vector<ManifestChange> changes;  // in section order, then key order
  bool identical() const { return changes.empty(); }
};

// A run's manifest: `path` itself when it is a manifest file, or rldk_manifest.json in that folder, beside that file,
// or one folder up (a trainer's output folder holding rldk/metrics.jsonl).
Result<std::string> find_run_manifest(const std::string& path);
// Only an rldk_manifest.json found for a run's log (never the log itself): what `rldk diff` looks for.
std::optional<std::string> manifest_beside(const std::string& log_path);
Result<ManifestDiff> diff_run_manifests(const std::string& a, const std::string& b);
Json manifest_diff_json(const ManifestDiff& diff);
std::string manifest_diff_text(const ManifestDiff& diff);
std::string manifest_diff_markdown(const ManifestDiff& diff);

}  // namespace rldk::provenance
