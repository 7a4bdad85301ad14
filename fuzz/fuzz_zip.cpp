// Arbitrary bytes read as a ZIP archive: the directory parser (end record, central directory, ZIP64 records and extra
// fields, local headers) must never read outside the buffer, and every entry it returns must lie inside it.
// Seeds: torch.save files and small zips (fuzz/corpus/zip).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view file(reinterpret_cast<const char*>(data), size);
  std::vector<rldk::ckpt::ZipEntry> entries;
  std::string error;
  if (!rldk::ckpt::parse_zip_directory(file, entries, error)) return 0;
  for (const auto& e : entries) {
    if (e.data_offset > size || e.compressed_size > size - e.data_offset) __builtin_trap();
    std::string inflated;
    std::string_view bytes;
    // Inflate only small entries: the fuzzer's memory limit is not what is being tested.
    if (rldk::ckpt::zip_entry_bytes(file, e, inflated, bytes, error, 1 << 20)) {
      volatile char sink = bytes.empty() ? 0 : bytes.back();
      (void)sink;
    }
  }
  return 0;
}
