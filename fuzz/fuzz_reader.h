// Shared body of the reader fuzz targets: feed bytes to a StreamReader (format forced or sniffed) in chunks whose
// sizes come from the input itself, so line splitting across chunk borders is exercised too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rldk/summary.h"

namespace rldk::fuzz {

inline void read_bytes(const uint8_t* data, size_t size, Format format) {
  ReadOptions options;
  options.format = format;
  SummaryBuilder sink;
  Diagnostics diagnostics;
  StreamReader reader(SourceInfo{"fuzz", "", ""}, options, sink, diagnostics);
  size_t chunk = size > 0 ? (data[0] % 64) + 1 : 1;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  while (!bytes.empty()) {
    size_t n = bytes.size() < chunk ? bytes.size() : chunk;
    reader.feed(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  reader.finish();
  // Invariant: every point the reader counted reached the sink.
  uint64_t total = 0;
  for (const auto& run : sink.take()) total += run.points;
  if (total != reader.points()) __builtin_trap();
}

}  // namespace rldk::fuzz
