// Byte sources: a file or stdin, transparently decompressed (gzip, zstd) by looking at the magic bytes, not the
// file name, and UTF-16 text with a byte-order mark transcoded to UTF-8. Reads are chunked so memory does not depend
// on file size.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "rldk/result.h"

namespace rldk::io {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes; returns 0 at end of data. Problems (a truncated or corrupt compressed stream)
  // end the data and are reported by problem().
  virtual size_t read(char* buffer, size_t capacity) = 0;
  // Empty, or why the data ended early (e.g. "gzip stream is truncated after 1048576 bytes").
  virtual std::string problem() const = 0;
  virtual std::string compression() const = 0;  // "", "gzip" or "zstd"
};

// Opens `path` ("-" is stdin). Errors: not_found, unreadable.
Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path);

}  // namespace rldk::io
