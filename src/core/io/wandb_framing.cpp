#include "io/wandb_framing.h"

#include <zlib.h>

namespace rldk::io {
namespace {

uint32_t load_le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t chunk_crc(uint8_t type, std::string_view payload) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  crc = ::crc32(crc, &type, 1);
  // zlib takes a uInt length; a chunk is at most one 32 KiB block.
  crc = ::crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}

}  // namespace

void WandbFramer::feed(std::string_view bytes) {
  if (bad_file_) return;
  if (buffer_.empty()) {
    size_t pos = consume(bytes, 0);
    buffer_.assign(bytes.substr(pos));
    base_ += pos;
    return;
  }
  buffer_.append(bytes);
  size_t pos = consume(buffer_, 0);
  buffer_.erase(0, pos);
  base_ += pos;
}

void WandbFramer::damaged(uint64_t offset, const std::string& why) {
  context_.diagnose("wandb_bad_chunk", 0,
                    "byte " + std::to_string(offset) + ": " + why + "; the rest of its 32 KiB block is skipped");
  if (in_record_) drop_partial(offset, "its remaining chunks were lost with the damaged block");
  skip_until_ = (offset / BLOCK_BYTES + 1) * BLOCK_BYTES;
}

void WandbFramer::drop_partial(uint64_t offset, const std::string& why) {
  context_.diagnose("wandb_partial_record", 0,
                    "record " + std::to_string(records_ + 1) + " starting at byte " + std::to_string(record_offset_) +
                        " dropped at byte " + std::to_string(offset) + ": " + why);
  ++records_;
  record_.clear();
  in_record_ = false;
}

size_t WandbFramer::consume(std::string_view data, size_t pos) {
  if (!header_checked_) {
    if (data.size() - pos < FILE_HEADER_BYTES) return pos;
    std::string_view header = data.substr(pos, FILE_HEADER_BYTES);
    if (header.substr(0, 4) != ":W&B" || static_cast<uint8_t>(header[4]) != 0xE1 ||
        static_cast<uint8_t>(header[5]) != 0xBE) {
      context_.diagnose("wandb_bad_header", 0, "byte 0: not a W&B transaction log (bad file header); not read");
      bad_file_ = true;
      return data.size();
    }
    if (header[6] != 0) {
      context_.diagnose("wandb_bad_header", 0,
                        "byte 6: unknown W&B log version " + std::to_string(static_cast<uint8_t>(header[6])) +
                            "; read as version 0");
    }
    header_checked_ = true;
    pos += FILE_HEADER_BYTES;
  }
  for (;;) {
    uint64_t offset = base_ + pos;
    if (offset < skip_until_) {
      size_t skip = static_cast<size_t>(std::min<uint64_t>(skip_until_ - offset, data.size() - pos));
      pos += skip;
      if (base_ + pos < skip_until_) return pos;
      continue;
    }
    size_t block_left = BLOCK_BYTES - static_cast<size_t>(offset % BLOCK_BYTES);
    if (block_left < CHUNK_HEADER_BYTES) {
      skip_until_ = offset + block_left;  // trailer padding
      continue;
    }
    if (data.size() - pos < CHUNK_HEADER_BYTES) return pos;
    const char* h = data.data() + pos;
    uint32_t stored = load_le32(h);
    size_t length = static_cast<uint8_t>(h[4]) | (size_t{static_cast<uint8_t>(h[5])} << 8);
    auto type = static_cast<uint8_t>(h[6]);
    if (type == ZERO && length == 0 && stored == 0) {
      // A zeroed region (preallocated space): nothing was written in the rest of this block.
      skip_until_ = offset + block_left;
      continue;
    }
    if (length > block_left - CHUNK_HEADER_BYTES) {
      damaged(offset, "chunk length " + std::to_string(length) + " runs past the end of its block");
      continue;
    }
    if (data.size() - pos < CHUNK_HEADER_BYTES + length) return pos;  // the rest has not arrived yet
    std::string_view payload = data.substr(pos + CHUNK_HEADER_BYTES, length);
    if (chunk_crc(type, payload) != stored) {
      damaged(offset, "chunk checksum mismatch");
      continue;
    }
    pos += CHUNK_HEADER_BYTES + length;
    switch (type) {
      case FULL:
        if (in_record_) drop_partial(offset, "a new record began before its last chunk");
        ++records_;
        on_record_(payload, records_, offset);
        break;
      case FIRST:
        if (in_record_) drop_partial(offset, "a new record began before its last chunk");
        in_record_ = true;
        record_offset_ = offset;
        record_.assign(payload);
        break;
      case MIDDLE:
      case LAST:
        if (!in_record_) {
          context_.diagnose("wandb_partial_record", 0,
                            "byte " + std::to_string(offset) + ": a continuation chunk without its first chunk; skipped");
          break;
        }
        record_.append(payload);
        if (type == LAST) {
          ++records_;
          in_record_ = false;
          on_record_(record_, records_, record_offset_);
          record_.clear();
        }
        break;
      default:
        damaged(offset, "unknown chunk type " + std::to_string(type));
        break;
    }
  }
}

void WandbFramer::finish() {
  if (bad_file_) return;
  if (!header_checked_) {
    if (!buffer_.empty() || base_ > 0) {
      context_.diagnose("wandb_truncated", 0, "byte 0: the file ends inside the 7-byte W&B header");
    }
    return;
  }
  uint64_t end = base_ + buffer_.size();
  if (!buffer_.empty() && end > skip_until_) {
    bool zeros = buffer_.find_first_not_of('\0') == std::string::npos;
    if (!zeros) {
      context_.diagnose("wandb_truncated", 0,
                        "byte " + std::to_string(base_) + ": incomplete last chunk (" + std::to_string(buffer_.size()) +
                            " bytes); the file was cut or is still being written");
    }
  }
  if (in_record_) drop_partial(end, "the file ends before its last chunk");
  buffer_.clear();
  base_ = end;
}

void WandbFramer::next_file() {
  finish();
  buffer_.clear();
  base_ = 0;
  skip_until_ = 0;
  header_checked_ = false;
  bad_file_ = false;
  record_.clear();
  in_record_ = false;
}

}  // namespace rldk::io
