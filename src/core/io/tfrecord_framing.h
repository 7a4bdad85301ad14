// TFRecord framing, the container of TensorBoard event files. Each record is
//   uint64 length | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)
// all little-endian. The framer is fed bytes in any chunks and calls back once per complete, checksum-verified
// record. Damage is a diagnostic with the byte offset and record number, never a stop:
//  - a data checksum mismatch drops that record (its length is trusted, since the length's own checksum held);
//  - a length checksum mismatch means the framing is lost: bytes are skipped until a valid header is found again;
//  - an incomplete last record is kept until more bytes come (a writer mid-record) and reported at finish().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "io/records.h"

namespace rldk::io {

class TfRecordFramer {
 public:
  // `index` is the 1-based record number, `offset` the record's byte offset in the file.
  using OnRecord = std::function<void(std::string_view data, uint64_t index, uint64_t offset)>;
  // Records longer than this are taken for a corrupt header even when its checksum happens to match.
  static constexpr uint64_t MAX_RECORD_BYTES = uint64_t{256} << 20;
  static constexpr size_t HEADER_BYTES = 12;
  static constexpr size_t FOOTER_BYTES = 4;

  TfRecordFramer(ReadContext& context, OnRecord on_record) : context_(context), on_record_(std::move(on_record)) {}

  void feed(std::string_view bytes);
  void finish();
  // finish(), and the bytes fed next start a new file at offset 0.
  void next_file();
  uint64_t records() const { return records_; }
  uint64_t bad_records() const { return bad_records_; }

  // True when `header` (at least HEADER_BYTES) is a plausible record header: the length's checksum matches.
  static bool valid_header(std::string_view header);

 private:
  // Consumes what it can of buffer_[pos..]; returns the new position.
  size_t consume(std::string_view data, size_t pos);
  void end_resync(uint64_t at);

  ReadContext& context_;
  OnRecord on_record_;
  std::string buffer_;      // bytes not yet consumed: a partial record, or nothing
  uint64_t base_ = 0;       // file offset of buffer_[0]
  uint64_t records_ = 0;
  uint64_t bad_records_ = 0;
  bool resyncing_ = false;  // looking for the next valid header after a corrupt one
  uint64_t resync_from_ = 0;
};

}  // namespace rldk::io
