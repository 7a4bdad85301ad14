// Reading the JSON documents provenance owns (lineage manifests, run manifests) with simdjson's DOM: small files,
// read whole, with every access checked so a hand-edited or truncated manifest is an error with its path, not a crash.
#pragma once

// GCC 12 reports -Wdangling-pointer / -Wmaybe-uninitialized inside simdjson's DOM accessors once they are inlined
// into chained lookups (doc["a"].get_array()); the element and array values are references into the parser's tape,
// which outlives them, so these are false positives of the header, silenced here and nowhere else.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <simdjson.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <string>
#include <string_view>

#include "rldk/result.h"

namespace rldk::provenance {

struct JsonDocument {
  simdjson::dom::parser parser;  // owns the parsed tree; keep it alive while `root` is used
  simdjson::dom::element root;
};

// Parses `path`; the root must be an object.
Status load_json_document(const std::string& path, JsonDocument& doc);

// Typed lookups that answer a default when the key is absent or of another type.
std::string string_field(simdjson::dom::element object, std::string_view key, std::string fallback = {});
uint64_t uint_field(simdjson::dom::element object, std::string_view key, uint64_t fallback = 0);

// The value as compact JSON text with object keys sorted (simdjson keeps document order), so two documents that
// differ only in key order compare equal.
std::string canonical_json(simdjson::dom::element value);

}  // namespace rldk::provenance
