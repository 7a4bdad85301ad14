#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::fuzz::read_bytes(data, size, rldk::Format::unknown);
  return 0;
}
