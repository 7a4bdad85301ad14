#include "checkpoint/zip_archive.h"

#include <zlib.h>

#include <algorithm>

namespace rldk::ckpt {
namespace {

constexpr uint32_t EOCD_SIG = 0x06054b50;
constexpr uint32_t ZIP64_LOCATOR_SIG = 0x07064b50;
constexpr uint32_t ZIP64_EOCD_SIG = 0x06064b50;
constexpr uint32_t CENTRAL_SIG = 0x02014b50;
constexpr uint32_t LOCAL_SIG = 0x04034b50;
constexpr size_t EOCD_SIZE = 22;
constexpr size_t MAX_COMMENT = 0xFFFF;

uint64_t le(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

}  // namespace

bool parse_zip_directory(std::string_view file, std::vector<ZipEntry>& entries, std::string& error) {
  entries.clear();
  if (file.size() < EOCD_SIZE) {
    error = "too short for a zip archive";
    return false;
  }
  // The end record is the last 22 bytes plus a comment of up to 64 KiB: search backwards for its signature.
  size_t lowest = file.size() > EOCD_SIZE + MAX_COMMENT ? file.size() - EOCD_SIZE - MAX_COMMENT : 0;
  size_t eocd = std::string_view::npos;
  for (size_t at = file.size() - EOCD_SIZE + 1; at-- > lowest;) {
    if (le(file, at, 4) == EOCD_SIG && at + EOCD_SIZE + le(file, at + 20, 2) == file.size()) {
      eocd = at;
      break;
    }
  }
  if (eocd == std::string_view::npos) {
    error = "no zip end-of-central-directory record (truncated?)";
    return false;
  }
  uint64_t count = le(file, eocd + 10, 2);
  uint64_t cd_size = le(file, eocd + 12, 4);
  uint64_t cd_offset = le(file, eocd + 16, 4);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    // ZIP64: a locator right before the end record points at the 64-bit end record.
    if (eocd < 20 || le(file, eocd - 20, 4) != ZIP64_LOCATOR_SIG) {
      error = "zip64 end-of-central-directory locator missing";
      return false;
    }
    uint64_t rec = le(file, eocd - 20 + 8, 8);
    if (rec > file.size() || file.size() - rec < 56 || le(file, rec, 4) != ZIP64_EOCD_SIG) {
      error = "zip64 end-of-central-directory record missing or out of the file";
      return false;
    }
    count = le(file, rec + 32, 8);
    cd_size = le(file, rec + 40, 8);
    cd_offset = le(file, rec + 48, 8);
  }
  if (cd_offset > file.size() || cd_size > file.size() - cd_offset) {
    error = "central directory lies outside the file";
    return false;
  }
  // Each central entry takes at least 46 bytes: a count larger than that allows is a lie, refused before reserving.
  if (count > cd_size / 46) {
    error = "central directory claims " + std::to_string(count) + " entries in " + std::to_string(cd_size) + " bytes";
    return false;
  }
  entries.reserve(count);
  uint64_t at = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (cd_end - at < 46 || le(file, at, 4) != CENTRAL_SIG) {
      error = "central directory entry " + std::to_string(i) + " is damaged";
      return false;
    }
    ZipEntry e;
    e.method = static_cast<uint16_t>(le(file, at + 10, 2));
    e.compressed_size = le(file, at + 20, 4);
    e.size = le(file, at + 24, 4);
    uint64_t name_len = le(file, at + 28, 2), extra_len = le(file, at + 30, 2), comment_len = le(file, at + 32, 2);
    uint64_t local = le(file, at + 42, 4);
    if (cd_end - at - 46 < name_len + extra_len + comment_len) {
      error = "central directory entry " + std::to_string(i) + " runs past the directory";
      return false;
    }
    e.name = std::string(file.substr(at + 46, name_len));
    // ZIP64 extra field: the 64-bit values, in order, for each 32-bit field that holds 0xFFFFFFFF.
    uint64_t x = at + 46 + name_len, x_end = x + extra_len;
    while (x_end - x >= 4) {
      uint64_t id = le(file, x, 2), len = le(file, x + 2, 2);
      if (x_end - x - 4 < len) break;
      if (id == 0x0001) {
        uint64_t p = x + 4, p_end = p + len;
        auto take = [&](uint64_t& field) {
          if (field != 0xFFFFFFFF) return true;
          if (p_end - p < 8) return false;
          field = le(file, p, 8);
          p += 8;
          return true;
        };
        if (!take(e.size) || !take(e.compressed_size) || !take(local)) {
          error = "zip64 extra field of \"" + e.name + "\" is too short";
          return false;
        }
      }
      x += 4 + len;
    }
    if (local > file.size() || file.size() - local < 30 || le(file, local, 4) != LOCAL_SIG) {
      error = "local header of \"" + e.name + "\" is missing or outside the file";
      return false;
    }
    uint64_t data = local + 30 + le(file, local + 26, 2) + le(file, local + 28, 2);
    if (data > file.size() || e.compressed_size > file.size() - data) {
      error = "data of \"" + e.name + "\" runs past the end of the file";
      return false;
    }
    if (e.method == 0 && e.size != e.compressed_size) {
      error = "stored entry \"" + e.name + "\" has different sizes in the directory";
      return false;
    }
    e.data_offset = data;
    entries.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  return true;
}

bool zip_entry_bytes(std::string_view file, const ZipEntry& entry, std::string& inflated, std::string_view& bytes,
                     std::string& error, uint64_t max_inflated) {
  std::string_view raw = file.substr(entry.data_offset, entry.compressed_size);
  if (entry.method == 0) {
    bytes = raw;
    return true;
  }
  if (entry.method != 8) {
    error = "entry \"" + entry.name + "\" uses zip compression method " + std::to_string(entry.method);
    return false;
  }
  if (entry.size > max_inflated) {
    error = "deflated entry \"" + entry.name + "\" is too large to inflate (" + std::to_string(entry.size) + " bytes)";
    return false;
  }
  inflated.assign(entry.size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    error = "zlib initialisation failed";
    return false;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(std::min<uint64_t>(raw.size(), UINT32_MAX));
  zs.next_out = reinterpret_cast<Bytef*>(inflated.data());
  zs.avail_out = static_cast<uInt>(std::min<uint64_t>(inflated.size(), UINT32_MAX));
  int rc = inflate(&zs, Z_FINISH);
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != entry.size) {
    error = "deflated entry \"" + entry.name + "\" is damaged";
    return false;
  }
  bytes = inflated;
  return true;
}

}  // namespace rldk::ckpt
