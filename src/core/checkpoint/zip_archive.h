// The directory of a ZIP archive (what torch.save writes since PyTorch 1.6): end-of-central-directory record,
// central directory, ZIP64 extensions, and each entry's local header to find where its bytes start. Nothing is
// decompressed here; torch writes storages uncompressed so they are viewed in place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rldk::ckpt {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;          // 0 stored, 8 deflate
  uint64_t compressed_size = 0;
  uint64_t size = 0;            // uncompressed
  uint64_t data_offset = 0;     // where the (possibly compressed) bytes start in the archive
};

// Parses the directory of the archive in `file`. Every offset and size is checked against the file, so entries
// returned can be sliced without further checks. On failure returns false with `error` saying what is wrong.
bool parse_zip_directory(std::string_view file, std::vector<ZipEntry>& entries, std::string& error);

// An entry's bytes: stored entries are a view into `file`; deflated ones are inflated into `inflated` (at most
// `max_inflated` bytes). False with `error` on a bad stream or another method.
bool zip_entry_bytes(std::string_view file, const ZipEntry& entry, std::string& inflated, std::string_view& bytes,
                     std::string& error, uint64_t max_inflated = 1ULL << 30);

}  // namespace rldk::ckpt
