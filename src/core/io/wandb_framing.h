// The framing of W&B transaction logs (run-<id>.wandb): the LevelDB log format behind a 7-byte W&B header.
//   file header: ":W&B" | uint16 LE 0xBEE1 | uint8 version 0
//   the stream is cut into 32 KiB blocks (the header takes the first 7 bytes of block 0); a block holds chunks
//   chunk: uint32 LE CRC-32 (IEEE, over the type byte and the payload) | uint16 LE length | uint8 type | payload
//   type FULL = a whole record; FIRST, MIDDLE..., LAST = one record cut across blocks; fewer than 7 bytes left in a
//   block are zero padding.
// The framer is fed bytes in any chunks and calls back once per complete record. A checksum mismatch or an
// impossible chunk drops the rest of that block (the length cannot be trusted), as LevelDB's own reader does, and is
// reported with its byte offset; an incomplete last record waits for more bytes and is reported at finish().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "io/records.h"

namespace rldk::io {

class WandbFramer {
 public:
  // `index` is the 1-based record number, `offset` the byte offset of the record's first chunk.
  using OnRecord = std::function<void(std::string_view data, uint64_t index, uint64_t offset)>;
  static constexpr size_t BLOCK_BYTES = 32768;
  static constexpr size_t FILE_HEADER_BYTES = 7;
  static constexpr size_t CHUNK_HEADER_BYTES = 7;

  WandbFramer(ReadContext& context, OnRecord on_record) : context_(context), on_record_(std::move(on_record)) {}

  void feed(std::string_view bytes);
  void finish();
  // finish(), and the bytes fed next are a new file, header first (the log of the same run, resumed).
  void next_file();
  uint64_t records() const { return records_; }

 private:
  enum ChunkType : uint8_t { ZERO = 0, FULL = 1, FIRST = 2, MIDDLE = 3, LAST = 4 };
  size_t consume(std::string_view data, size_t pos);
  void damaged(uint64_t offset, const std::string& why);
  void drop_partial(uint64_t offset, const std::string& why);

  ReadContext& context_;
  OnRecord on_record_;
  std::string buffer_;
  uint64_t base_ = 0;          // file offset of buffer_[0]
  uint64_t skip_until_ = 0;    // bytes before this offset are skipped (padding, a damaged block)
  bool header_checked_ = false;
  bool bad_file_ = false;      // not a W&B log: everything is ignored
  std::string record_;         // payload of a record cut across blocks, so far
  bool in_record_ = false;
  uint64_t record_offset_ = 0;
  uint64_t records_ = 0;
};

}  // namespace rldk::io
