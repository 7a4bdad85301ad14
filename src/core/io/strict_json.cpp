#include "io/strict_json.h"

#include <simdjson.h>

#include <cmath>
#include <limits>
#include <new>
#include <string>

namespace rldk::io {
namespace {

namespace dom = simdjson::dom;

// Objects nested deeper than this, and lists too, go to the lenient parser, which owns the "nesting is too deep"
// diagnostic; far below LenientParser::MAX_DEPTH, so nothing it rejects for depth is ever accepted here.
constexpr size_t MAX_DEPTH = 32;

// The DOM parser rather than On-Demand: simdjson 3.0 builds On-Demand only for the instruction set the translation
// unit is compiled for (the x86-64 baseline: its scalar fallback), while the DOM parser picks the best kernel for the
// CPU at run time (AVX2, AVX-512). One parser and one padded copy of the line per thread: parsing a line allocates
// nothing once they have grown. simdjson reads up to SIMDJSON_PADDING bytes past the end of its input, and a line
// is followed by the next one's bytes or by nothing, so each line is copied into a padded buffer first.
struct ThreadState {
  dom::parser parser;
  std::string buffer;
  ThreadState() {
    if (parser.allocate(1 << 16, MAX_DEPTH)) throw std::bad_alloc();
  }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

bool object_into(dom::object object, FlatRecord& out, uint32_t prefix_begin, uint32_t prefix_len, uint32_t depth);

bool value_into(dom::element value, FlatRecord& out, uint32_t key_begin, uint32_t key_len, uint32_t depth) {
  double x = 0.0;
  switch (value.type()) {
    case dom::element_type::OBJECT: return object_into(dom::object(value), out, key_begin, key_len, depth + 1);
    case dom::element_type::ARRAY: ++out.skipped_lists; return true;
    // Integers beyond 64 bits come as doubles; a double out of range (1e400) is a parse error, declined above.
    case dom::element_type::INT64: x = static_cast<double>(int64_t(value)); break;
    case dom::element_type::UINT64: x = static_cast<double>(uint64_t(value)); break;
    case dom::element_type::DOUBLE: x = double(value); break;
    case dom::element_type::STRING: {
      std::string_view s(value);
      const auto begin = static_cast<uint32_t>(out.arena.size());
      out.arena.append(s);
      out.fields.push_back(
          FlatField{key_begin, key_len, depth, ValueKind::string, 0.0, begin, static_cast<uint32_t>(s.size())});
      return true;
    }
    case dom::element_type::BOOL:
      out.fields.push_back(FlatField{key_begin, key_len, depth, ValueKind::boolean, bool(value) ? 1.0 : 0.0, 0, 0});
      return true;
    case dom::element_type::NULL_VALUE:
      out.fields.push_back(
          FlatField{key_begin, key_len, depth, ValueKind::null, std::numeric_limits<double>::quiet_NaN(), 0, 0});
      return true;
  }
  out.fields.push_back(FlatField{key_begin, key_len, depth, ValueKind::number, x, 0, 0});
  return true;
}

bool object_into(dom::object object, FlatRecord& out, uint32_t prefix_begin, uint32_t prefix_len, uint32_t depth) {
  if (depth > MAX_DEPTH) return false;
  for (dom::key_value_pair member : object) {
    const auto key_begin = static_cast<uint32_t>(out.arena.size());
    if (depth > 0) {
      out.arena.append(out.arena.data() + prefix_begin, prefix_len);  // self-append is safe for std::string
      out.arena.push_back('/');
    }
    out.arena.append(member.key);
    const auto key_len = static_cast<uint32_t>(out.arena.size() - key_begin);
    if (!value_into(member.value, out, key_begin, key_len, depth)) return false;
  }
  return true;
}

}  // namespace

bool parse_strict_flat_object(std::string_view text, FlatRecord& out) {
  out.clear();
  ThreadState& state = thread_state();
  state.buffer.assign(text);
  state.buffer.append(simdjson::SIMDJSON_PADDING, '\0');
  dom::element root;
  if (state.parser.parse(state.buffer.data(), text.size(), false).get(root)) return false;
  dom::object object;
  if (root.get_object().get(object)) return false;
  return object_into(object, out, 0, 0, 0);
}

bool same_fields(const FlatRecord& a, const FlatRecord& b) {
  if (a.skipped_lists != b.skipped_lists || a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const FlatField& x = a.fields[i];
    const FlatField& y = b.fields[i];
    if (a.key(x) != b.key(y) || x.depth != y.depth || x.kind != y.kind) return false;
    if (x.kind == ValueKind::string) {
      if (a.str(x) != b.str(y)) return false;
    } else if (!(x.number == y.number || (std::isnan(x.number) && std::isnan(y.number)))) {
      return false;
    }
  }
  return true;
}

}  // namespace rldk::io
