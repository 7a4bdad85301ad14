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

// True when two records hold the same fields in the same order: keys, depths, kinds, strings, and numbers that are
// the same double (NaN with NaN; -0 and 0 are equal: simdjson reads the integer "-0" as 0, and as a metric value the
// sign of a zero carries nothing), and the same count of skipped lists. How the scanner is checked against simdjson.
bool same_fields(const FlatRecord& a, const FlatRecord& b);

}  // namespace rldk::io
