#include "json_document.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "model/json_text.h"

namespace rldk::provenance {

Status load_json_document(const std::string& path, JsonDocument& doc) {
  simdjson::padded_string text;
  if (auto err = simdjson::padded_string::load(path).get(text); err) {
    return Error{err == simdjson::IO_ERROR ? ErrorCode::unreadable : ErrorCode::not_found,
                 std::string("cannot read: ") + simdjson::error_message(err), path};
  }
  return parse_json_document(text, path, doc);
}

Status parse_json_document(std::string_view text, const std::string& context, JsonDocument& doc) {
  // parse() copies unpadded text into padded scratch space (simdjson reads a little past the end).
  if (auto err = doc.parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(doc.root); err) {
    return Error{ErrorCode::unrecognized, std::string("not valid JSON: ") + simdjson::error_message(err), context};
  }
  if (!doc.root.is_object()) return Error{ErrorCode::unrecognized, "the document is not a JSON object", context};
  return Ok{};
}

std::string string_field(simdjson::dom::element object, std::string_view key, std::string fallback) {
  std::string_view value;
  if (object[key].get_string().get(value) != simdjson::SUCCESS) return fallback;
  return std::string(value);
}

uint64_t uint_field(simdjson::dom::element object, std::string_view key, uint64_t fallback) {
  uint64_t value = 0;
  if (object[key].get_uint64().get(value) != simdjson::SUCCESS) return fallback;
  return value;
}

namespace {

void append_canonical(std::string& out, simdjson::dom::element value) {
  using Type = simdjson::dom::element_type;
  switch (value.type()) {
    case Type::OBJECT: {
      std::vector<std::pair<std::string_view, simdjson::dom::element>> fields;
      for (auto field : object_of(value)) fields.emplace_back(field.key, field.value);
      std::sort(fields.begin(), fields.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      out += '{';
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, fields[i].first);
        out += ':';
        append_canonical(out, fields[i].second);
      }
      out += '}';
      return;
    }
    case Type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto item : array_of(value)) {
        if (!first) out += ',';
        first = false;
        append_canonical(out, item);
      }
      out += ']';
      return;
    }
    case Type::STRING:
      append_json_string(out, value.get_string().value_unsafe());
      return;
    case Type::INT64:
      out += std::to_string(value.get_int64().value_unsafe());
      return;
    case Type::UINT64:
      out += std::to_string(value.get_uint64().value_unsafe());
      return;
    case Type::DOUBLE:
      append_double(out, value.get_double().value_unsafe());
      return;
    case Type::BOOL:
      out += value.get_bool().value_unsafe() ? "true" : "false";
      return;
    case Type::NULL_VALUE:
      out += "null";
      return;
  }
}

}  // namespace

std::string canonical_json(simdjson::dom::element value) {
  std::string out;
  append_canonical(out, value);
  return out;
}

}  // namespace rldk::provenance
