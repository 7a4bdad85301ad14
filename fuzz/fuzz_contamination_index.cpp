// The contamination index file (`rldk contamination index`, `--index`) is read from disk and may be damaged,
// truncated, from another version or hostile: the input is parsed as an index, and, past the checksum, the body of
// a header made for it (so the fuzzer reaches the counts, strings and entries rather than stopping at the checksum).
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "rldk/contamination.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rldk::contamination;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)parse_index(bytes);
  // "RLDKCIDX", version 1, flags from the first byte, then the body's true checksum.
  std::string framed("RLDKCIDX", 8);
  uint32_t version = 1, flags = size ? data[0] & 7u : 0;
  uint64_t sum = XXH3_64bits(data, size);
  framed.append(reinterpret_cast<const char*>(&version), 4);
  framed.append(reinterpret_cast<const char*>(&flags), 4);
  framed.append(reinterpret_cast<const char*>(&sum), 8);
  framed.append(bytes);
  (void)parse_index(framed);
  return 0;
}
