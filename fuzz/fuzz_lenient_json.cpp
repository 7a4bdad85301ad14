#include <string_view>

#include "io/lenient_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::io::FlatRecord record;
  rldk::io::ParseError error;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (rldk::io::parse_flat_object(text, record, error)) {
    // Every key and string must lie inside the arena.
    for (const auto& f : record.fields) {
      if (size_t{f.key_begin} + f.key_len > record.arena.size()) __builtin_trap();
      if (f.kind == rldk::io::ValueKind::string && size_t{f.str_begin} + f.str_len > record.arena.size()) {
        __builtin_trap();
      }
    }
  } else if (error.offset > size) {
    __builtin_trap();
  }
  return 0;
}
