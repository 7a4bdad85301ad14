#include "io/tfrecord_framing.h"

#include <cstring>

#include "io/crc32c.h"

namespace rldk::io {
namespace {

uint64_t load_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t load_le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string at(uint64_t index, uint64_t offset) {
  return "record " + std::to_string(index) + " at byte " + std::to_string(offset);
}

}  // namespace

bool TfRecordFramer::valid_header(std::string_view header) {
  if (header.size() < HEADER_BYTES) return false;
  uint64_t length = load_le64(header.data());
  return length <= MAX_RECORD_BYTES && masked_crc32c(header.substr(0, 8)) == load_le32(header.data() + 8);
}

void TfRecordFramer::feed(std::string_view bytes) {
  if (buffer_.empty()) {
    // The common case (whole records in each chunk) is parsed in place; only a partial record is copied.
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

size_t TfRecordFramer::consume(std::string_view data, size_t pos) {
  while (data.size() - pos >= HEADER_BYTES) {
    std::string_view header = data.substr(pos, HEADER_BYTES);
    if (!valid_header(header)) {
      if (!resyncing_) {
        resyncing_ = true;
        resync_from_ = base_ + pos;
      }
      ++pos;  // slide one byte: a header may start anywhere after the damage
      continue;
    }
    if (resyncing_) end_resync(base_ + pos);
    uint64_t length = load_le64(header.data());
    if (data.size() - pos - HEADER_BYTES < length + FOOTER_BYTES) break;  // the rest has not arrived yet
    std::string_view payload = data.substr(pos + HEADER_BYTES, static_cast<size_t>(length));
    uint32_t stored = load_le32(data.data() + pos + HEADER_BYTES + length);
    uint64_t offset = base_ + pos;
    ++records_;
    if (masked_crc32c(payload) != stored) {
      ++bad_records_;
      context_.diagnose("tfrecord_bad_checksum", 0,
                        at(records_, offset) + ": data checksum mismatch (" + std::to_string(length) +
                            " bytes); record skipped");
    } else {
      on_record_(payload, records_, offset);
    }
    pos += HEADER_BYTES + static_cast<size_t>(length) + FOOTER_BYTES;
  }
  return pos;
}

void TfRecordFramer::end_resync(uint64_t at_offset) {
  resyncing_ = false;
  context_.diagnose("tfrecord_bad_header", 0,
                    "byte " + std::to_string(resync_from_) + ": corrupt record header (length checksum mismatch); " +
                        "skipped " + std::to_string(at_offset - resync_from_) + " bytes to the next valid record" +
                        " at byte " + std::to_string(at_offset));
}

void TfRecordFramer::finish() {
  if (resyncing_) {
    context_.diagnose("tfrecord_bad_header", 0,
                      "byte " + std::to_string(resync_from_) +
                          ": corrupt record header (length checksum mismatch); no valid record after it (" +
                          std::to_string(base_ + buffer_.size() - resync_from_) + " bytes skipped)");
    resyncing_ = false;
  } else if (!buffer_.empty()) {
    std::string expected = "fewer than 12 header bytes";
    if (buffer_.size() >= HEADER_BYTES) {
      expected = std::to_string(HEADER_BYTES + load_le64(buffer_.data()) + FOOTER_BYTES) + " bytes expected";
    }
    context_.diagnose("tfrecord_truncated", 0,
                      at(records_ + 1, base_) + ": incomplete last record (" + std::to_string(buffer_.size()) +
                          " bytes, " + expected + "); the file was cut or is still being written");
  }
  base_ += buffer_.size();
  buffer_.clear();
}

void TfRecordFramer::next_file() {
  finish();
  base_ = 0;
}

}  // namespace rldk::io
