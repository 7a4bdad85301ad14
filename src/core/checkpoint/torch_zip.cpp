// torch.save's zip checkpoints: <archive>/data.pkl describes the objects, <archive>/data/<key> holds each storage's raw
// bytes (stored uncompressed, 64-byte aligned). Tensors become views into the storages; a non-contiguous view (a
// slice saved as its own tensor) is the one case copied, into a buffer of its own size.
#include <cstring>

#include "checkpoint/readers.h"
#include "checkpoint/restricted_pickle.h"
#include "checkpoint/zip_archive.h"

namespace rldk::ckpt {
namespace {

Error bad(const std::string& file, std::string message) {
  return Error{ErrorCode::unrecognized, std::move(message), file};
}

// pre-1.6 torch.save: PROTO 2, then LONG1 of 10 bytes holding 0x1950a86a20f9469cfc6c.
constexpr unsigned char LEGACY_PREFIX[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

}  // namespace

bool is_legacy_torch_file(std::string_view file) {
  return file.size() >= sizeof LEGACY_PREFIX && std::memcmp(file.data(), LEGACY_PREFIX, sizeof LEGACY_PREFIX) == 0;
}

Status parse_torch_zip(std::string_view file, const std::string& file_name, std::vector<TensorView>& tensors,
                       std::vector<std::shared_ptr<const void>>& keep) {
  std::vector<ZipEntry> entries;
  std::string error;
  if (!parse_zip_directory(file, entries, error)) return bad(file_name, "not a valid torch zip checkpoint: " + error);
  const ZipEntry* pkl = nullptr;
  std::string prefix;
  for (const auto& e : entries) {
    if (e.name == "data.pkl" || (e.name.size() > 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0)) {
      // The top-level data.pkl (torch writes exactly one); nested copies would be a different format.
      if (pkl == nullptr || e.name.size() < pkl->name.size()) {
        pkl = &e;
        prefix = e.name.substr(0, e.name.size() - 8);
      }
    }
  }
  if (pkl == nullptr) return bad(file_name, "zip archive without data.pkl: not a torch.save checkpoint");
  std::string inflated;
  std::string_view pickle;
  if (!zip_entry_bytes(file, *pkl, inflated, pickle, error, 1ULL << 30)) return bad(file_name, error);
  PickleDocument doc;
  if (!load_restricted_pickle(pickle, doc, error)) {
    return bad(file_name, "refused " + pkl->name + ": " + error);
  }
  std::vector<std::pair<std::string, const PickleTensor*>> found;
  collect_state_dict(doc.root, found);
  std::map<std::string, const ZipEntry*> by_name;
  for (const auto& e : entries) by_name[e.name] = &e;
  // Storages are raw bytes in the writer's byte order; torch records it, and rldk decodes little-endian only.
  if (auto bo = by_name.find(prefix + "byteorder"); bo != by_name.end() && bo->second->method == 0 &&
                                                    file.substr(bo->second->data_offset, 3) == "big") {
    return bad(file_name, "big-endian torch file (byteorder \"big\"): not supported");
  }
  for (const auto& [name, t] : found) {
    auto it = by_name.find(prefix + "data/" + t->storage->key);
    if (it == by_name.end()) return bad(file_name, "tensor \"" + name + "\": storage data/" + t->storage->key + " is missing");
    const ZipEntry& e = *it->second;
    if (e.method != 0) return bad(file_name, "tensor \"" + name + "\": storage is compressed (torch writes it stored)");
    unsigned bits = dtype_bits(t->dtype);
    if (bits % 8 != 0) return bad(file_name, "tensor \"" + name + "\": sub-byte dtype in a torch file");
    uint64_t es = bits / 8;
    uint64_t storage_bytes = e.size;
    uint64_t numel = 1;
    for (uint64_t d : t->shape) {
      if (__builtin_mul_overflow(numel, d, &numel)) return bad(file_name, "tensor \"" + name + "\": size overflows");
    }
    TensorView v;
    v.name = name;
    v.dtype = t->dtype;
    v.shape = t->shape;
    v.numel = numel;
    v.file = file_name;
    if (__builtin_mul_overflow(numel, es, &v.nbytes)) return bad(file_name, "tensor \"" + name + "\": size overflows");
    const auto* base = reinterpret_cast<const uint8_t*>(file.data() + e.data_offset);
    if (numel == 0) {
      v.data = base;
      tensors.push_back(std::move(v));
      continue;
    }
    // Contiguous (row-major, dims of size 1 may carry any stride) unless a stride says otherwise.
    bool contiguous = true;
    uint64_t expect = 1;
    uint64_t last = t->offset;  // highest element index touched
    for (size_t i = t->shape.size(); i-- > 0;) {
      if (t->stride[i] < 0) return bad(file_name, "tensor \"" + name + "\": negative stride");
      uint64_t s = static_cast<uint64_t>(t->stride[i]);
      if (t->shape[i] != 1 && s != expect) contiguous = false;
      expect *= t->shape[i];
      uint64_t span = 0;
      if (__builtin_mul_overflow(t->shape[i] - 1, s, &span) || __builtin_add_overflow(last, span, &last)) {
        return bad(file_name, "tensor \"" + name + "\": strides overflow");
      }
    }
    uint64_t last_byte = 0;
    if (__builtin_mul_overflow(last + 1, es, &last_byte) || last_byte > storage_bytes) {
      return bad(file_name, "tensor \"" + name + "\": view reaches past its storage (" + std::to_string(storage_bytes) +
                                " bytes)");
    }
    if (contiguous) {
      v.data = base + t->offset * es;
    } else {
      auto copy = std::make_shared<std::vector<uint8_t>>(v.nbytes);
      std::vector<uint64_t> idx(t->shape.size(), 0);
      for (uint64_t k = 0; k < numel; ++k) {
        uint64_t at = t->offset;
        for (size_t i = 0; i < idx.size(); ++i) at += idx[i] * static_cast<uint64_t>(t->stride[i]);
        std::memcpy(copy->data() + k * es, base + at * es, es);
        for (size_t i = idx.size(); i-- > 0;) {
          if (++idx[i] < t->shape[i]) break;
          idx[i] = 0;
        }
      }
      v.data = copy->data();
      keep.push_back(copy);
    }
    tensors.push_back(std::move(v));
  }
  return Ok{};
}

}  // namespace rldk::ckpt
