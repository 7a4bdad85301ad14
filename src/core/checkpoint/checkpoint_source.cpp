// Which reader a path needs: a file is recognised by its first bytes (zip, safetensors, legacy torch pickle), a folder
// by the names Hugging Face's save_pretrained writes (single file or sharded index, safetensors preferred), and a
// torch.distributed.checkpoint folder is named as such rather than misread.
#include <algorithm>
#include <filesystem>
#include <set>

#include "checkpoint/header_json.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/readers.h"

namespace rldk::ckpt {
namespace fs = std::filesystem;
namespace {

Error unrecognized(const std::string& path, std::string message) {
  return Error{ErrorCode::unrecognized, std::move(message), path};
}

// One file of either kind, appended to `ckpt`.
Status read_file_into(const std::string& path, Checkpoint& ckpt, std::string& format) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) return mapped.error();
  std::string_view bytes = mapped.value()->bytes();
  ckpt.storage.push_back(mapped.value());
  if (bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4)) {
    format = "torch-zip";
    return parse_torch_zip(bytes, path, ckpt.tensors, ckpt.storage);
  }
  if (is_legacy_torch_file(bytes)) {
    return unrecognized(path, "legacy torch.save file (PyTorch < 1.6 or _use_new_zipfile_serialization=False) is not "
                              "supported: re-save it with a current torch.save, or convert it to safetensors");
  }
  if (bytes.size() >= 9 && bytes[8] == '{') {
    format = "safetensors";
    std::map<std::string, std::string> metadata;
    Status st = parse_safetensors(bytes, path, ckpt.tensors, metadata);
    if (ckpt.metadata.empty()) ckpt.metadata = std::move(metadata);
    return st;
  }
  if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) {
    return unrecognized(path, "a bare pickle, not a torch.save zip checkpoint or safetensors file");
  }
  if (bytes.size() >= 8) {
    // Might still be a safetensors file with a broken header: let its reader say what is wrong.
    std::map<std::string, std::string> metadata;
    format = "safetensors";
    Status st = parse_safetensors(bytes, path, ckpt.tensors, metadata);
    if (!st.ok()) {
      return unrecognized(path, "not a checkpoint (neither a torch.save zip file nor safetensors): " + st.error().message);
    }
    return st;
  }
  return unrecognized(path, "not a checkpoint (too short)");
}

// A sharded checkpoint through its index: {"weight_map": {tensor: shard file}}.
Status read_index(const std::string& index_path, Checkpoint& ckpt, std::string& format) {
  auto mapped = MappedFile::open(index_path);
  if (!mapped.ok()) return mapped.error();
  JsonNode root;
  std::string error;
  if (!parse_json(mapped.value()->bytes(), root, error)) return unrecognized(index_path, "index JSON: " + error);
  const JsonNode* map = root.find("weight_map");
  if (root.kind != JsonNode::Kind::object || map == nullptr || map->kind != JsonNode::Kind::object) {
    return unrecognized(index_path, "index has no weight_map object");
  }
  std::map<std::string, std::set<std::string>> by_shard;
  for (const auto& [tensor, shard] : map->members) {
    if (shard.kind != JsonNode::Kind::string) return unrecognized(index_path, "weight_map value of \"" + tensor + "\" is not a file name");
    // Shards are siblings of the index: a path (absolute, "..", a folder) in an untrusted index is refused.
    if (shard.text.empty() || shard.text.find('/') != std::string::npos || shard.text.find('\\') != std::string::npos ||
        shard.text == "." || shard.text == "..") {
      return unrecognized(index_path, "weight_map names \"" + shard.text + "\", not a file beside the index");
    }
    by_shard[shard.text].insert(tensor);
  }
  fs::path dir = fs::path(index_path).parent_path();
  for (const auto& [shard, names] : by_shard) {
    Checkpoint part;
    std::string shard_format;
    std::string shard_path = (dir / shard).string();
    Status st = read_file_into(shard_path, part, shard_format);
    if (!st.ok()) return st;
    format = shard_format + "-sharded";
    std::set<std::string> present;
    for (auto& t : part.tensors) {
      present.insert(t.name);
      if (names.count(t.name) != 0) ckpt.tensors.push_back(std::move(t));
    }
    for (const auto& n : names) {
      if (present.count(n) == 0) return unrecognized(index_path, "weight_map puts \"" + n + "\" in " + shard + ", which lacks it");
    }
    if (ckpt.metadata.empty()) ckpt.metadata = std::move(part.metadata);
    for (auto& s : part.storage) ckpt.storage.push_back(std::move(s));
  }
  return Ok{};
}

bool has_suffix(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status read_folder(const std::string& dir, Checkpoint& ckpt, std::string& format) {
  std::error_code ec;
  fs::path p(dir);
  bool distcp = fs::exists(p / ".metadata", ec);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(p, ec)) {
    std::string n = e.path().filename().string();
    if (has_suffix(n, ".distcp")) distcp = true;
    names.push_back(n);
  }
  if (ec) return Error{ErrorCode::unreadable, ec.message(), dir};
  std::sort(names.begin(), names.end());
  auto has = [&](const char* n) { return std::binary_search(names.begin(), names.end(), std::string(n)); };
  // Preference order as in transformers' from_pretrained: safetensors before pickles, single file before index.
  for (const char* single : {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                             "pytorch_model.bin.index.json"}) {
    if (!has(single)) continue;
    std::string path = (p / single).string();
    return has_suffix(path, ".index.json") ? read_index(path, ckpt, format) : read_file_into(path, ckpt, format);
  }
  if (distcp) {
    return unrecognized(dir, "torch.distributed.checkpoint folder (.metadata + .distcp shards) is not supported: "
                             "consolidate it first (torch.distributed.checkpoint.format_utils.dcp_to_torch_save)");
  }
  std::vector<std::string> candidates;
  for (const auto& n : names) {
    if (has_suffix(n, ".safetensors") || has_suffix(n, ".pt") || has_suffix(n, ".pth") || has_suffix(n, ".bin")) {
      candidates.push_back(n);
    }
  }
  if (candidates.size() == 1) return read_file_into((p / candidates[0]).string(), ckpt, format);
  if (candidates.empty()) {
    return unrecognized(dir, "no checkpoint in this folder (looked for model.safetensors, model.safetensors.index.json, "
                             "pytorch_model.bin, pytorch_model.bin.index.json, *.safetensors, *.pt, *.bin)");
  }
  return unrecognized(dir, "several checkpoint files and no index (" + std::to_string(candidates.size()) +
                               "); name the file to compare");
}

}  // namespace

Result<Checkpoint> read_checkpoint(const std::string& path) {
  Checkpoint ckpt;
  ckpt.path = path;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return Error{ErrorCode::not_found, "no such file or folder", path};
  Status st = Ok{};
  if (fs::is_directory(status)) {
    st = read_folder(path, ckpt, ckpt.format);
  } else if (has_suffix(path, ".index.json")) {
    st = read_index(path, ckpt, ckpt.format);
  } else {
    st = read_file_into(path, ckpt, ckpt.format);
  }
  if (!st.ok()) return st.error();
  std::sort(ckpt.tensors.begin(), ckpt.tensors.end(),
            [](const TensorView& x, const TensorView& y) { return x.name < y.name; });
  for (size_t i = 1; i < ckpt.tensors.size(); ++i) {
    if (ckpt.tensors[i].name == ckpt.tensors[i - 1].name) {
      return unrecognized(path, "tensor \"" + ckpt.tensors[i].name + "\" appears twice");
    }
  }
  return ckpt;
}

}  // namespace rldk::ckpt
