// A small strict JSON reader for the two checkpoint documents rldk reads: a safetensors header and a sharded index
// (model.safetensors.index.json). Both come from untrusted files, so it is bounded (nesting depth, input size given
// by the caller), refuses duplicate object keys (safetensors' rule: a second "w" must not shadow the first), and keeps
// non-negative integers exact as uint64 (offsets and shapes), which a double would round above 2^53.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rldk::ckpt {

struct JsonMember;

struct JsonNode {
  enum class Kind : uint8_t { null, boolean, number, string, array, object } kind = Kind::null;
  bool boolean = false;
  bool is_uint = false;    // number: a non-negative integer that fits uint64
  uint64_t uint = 0;
  std::string text;        // string value, or the number as written
  std::vector<JsonNode> items;                          // array
  std::vector<JsonMember> members;  // object, in file order

  const JsonNode* find(std::string_view key) const;
};

// An object member. Not std::pair: a pair of an incomplete type inside its own definition is rejected by some
// standard libraries' checks.
struct JsonMember {
  std::string first;
  JsonNode second;
};

// Parses `text` as exactly one JSON value (surrounding whitespace allowed). On failure returns false and sets
// `error` (with the byte offset).
bool parse_json(std::string_view text, JsonNode& out, std::string& error);

}  // namespace rldk::ckpt
