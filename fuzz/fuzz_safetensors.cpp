// Arbitrary bytes read as a .safetensors file: header validation must refuse or accept without crashing or reading
// outside the buffer, and every accepted tensor must lie inside it and decode. Seeds: files written by the
// safetensors library and a few broken ones (fuzz/corpus/safetensors).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/readers.h"
#include "checkpoint/tensor_values.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view file(reinterpret_cast<const char*>(data), size);
  std::vector<rldk::ckpt::TensorView> tensors;
  std::map<std::string, std::string> metadata;
  if (!rldk::ckpt::parse_safetensors(file, "fuzz.safetensors", tensors, metadata).ok()) return 0;
  double buffer[64];
  for (const auto& t : tensors) {
    if (t.data < data || t.data + t.nbytes > data + size) __builtin_trap();
    if (!rldk::ckpt::dtype_is_float(t.dtype) && !rldk::ckpt::dtype_is_integer(t.dtype)) continue;
    uint64_t n = t.numel < 64 ? t.numel : 64;
    rldk::ckpt::decode_to_double(t.dtype, t.data, static_cast<size_t>(n), buffer);
  }
  return 0;
}
