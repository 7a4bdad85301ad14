// The JSON-lines scanner on arbitrary bytes: nothing it reports may point outside its arena, and on every input
// simdjson accepts as one strict JSON object the scanner must read exactly the same fields (io/strict_json.h).
#include <cmath>
#include <string_view>

#include "io/lenient_json.h"
#include "io/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::io::FlatRecord record;
  rldk::io::ParseError error;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool ok = rldk::io::parse_flat_object(text, record, error);
  if (ok) {
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
  rldk::io::FlatRecord reference;
  if (!rldk::io::parse_strict_flat_object(text, reference)) return 0;
  if (!ok || !rldk::io::same_fields(record, reference)) __builtin_trap();
  return 0;
}
