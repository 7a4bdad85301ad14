// simdjson as the reference for the JSON-lines scanner (lenient_json.h): it fills the same FlatRecord, with the same
// flattening (nested keys joined by '/', lists skipped and counted), from any line that is strict JSON, and declines
// what only the lenient scanner reads (NaN, Python reprs, numbers beyond a double's range, invalid UTF-8, deep
// nesting, text after the object). The unit tests and the fuzzer check that the scanner agrees with it on every line
// of the fuzz corpora, the real-log fixtures and generated records (tests/unit/strict_json_test.cpp,
// fuzz/fuzz_lenient_json.cpp).
//
// Why it is the reference and not the hot path: measured on the benchmark files (docs/benchmarks.md, "simdjson on
// the hot path"), parsing one log line at a time costs simdjson more than the scanner, which skips the keys a logger
// repeats on every line with one comparison each; simdjson's strength is large documents.
#pragma once

#include <string_view>

#include "io/lenient_json.h"

namespace rldk::io {

// Fills `out` (cleared first) and returns true when `text` is one strict JSON object; returns false, leaving `out`
// unspecified, for anything else.
bool parse_strict_flat_object(std::string_view text, FlatRecord& out);

}  // namespace rldk::io
