// Reading the JSON documents provenance owns (lineage manifests, run manifests) with simdjson's DOM: small files,
// read whole, with every access checked so a hand-edited or truncated manifest is an error with its path, not a crash.
#pragma once

#include <simdjson.h>

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
// The same for text in memory; `context` names it in errors.
Status parse_json_document(std::string_view text, const std::string& context, JsonDocument& doc);

// The object or array of an element already checked with is_object()/is_array(), held by value: a range-for over
// `e.get_object().value_unsafe()` would iterate a reference into a temporary that is gone before the loop runs.
inline simdjson::dom::object object_of(simdjson::dom::element e) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return {};  // callers check the type first
  return o;
}
inline simdjson::dom::array array_of(simdjson::dom::element e) {
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) return {};
  return a;
}

// Typed lookups that answer a default when the key is absent or of another type.
std::string string_field(simdjson::dom::element object, std::string_view key, std::string fallback = {});
uint64_t uint_field(simdjson::dom::element object, std::string_view key, uint64_t fallback = 0);

// The value as compact JSON text with object keys sorted (simdjson keeps document order), so two documents that
// differ only in key order compare equal.
std::string canonical_json(simdjson::dom::element value);

}  // namespace rldk::provenance
