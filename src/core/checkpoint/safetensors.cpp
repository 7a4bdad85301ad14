// The safetensors reader: an 8-byte little-endian header size, a JSON header, then one byte buffer that the tensors
// tile exactly. Every rule of the format is checked here because the file is untrusted input: a lying header must
// produce an error naming what is wrong, never a read outside the mapping.
#include <algorithm>
#include <cstring>

#include "checkpoint/header_json.h"
#include "checkpoint/readers.h"

namespace rldk::ckpt {
namespace {

Error bad(const std::string& file, std::string message) {
  return Error{ErrorCode::unrecognized, "not a valid safetensors file: " + std::move(message), file};
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

}  // namespace

Status parse_safetensors(std::string_view file, const std::string& file_name, std::vector<TensorView>& tensors,
                         std::map<std::string, std::string>& metadata) {
  if (file.size() < 8) return bad(file_name, "shorter than the 8-byte header size (" + std::to_string(file.size()) + " bytes)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  if (n > SAFETENSORS_MAX_HEADER) {
    return bad(file_name, "header size " + std::to_string(n) + " is above the 100000000-byte limit");
  }
  if (n > file.size() - 8) {
    return bad(file_name, "header size " + std::to_string(n) + " is larger than the rest of the file (" +
                              std::to_string(file.size() - 8) + " bytes): truncated or not safetensors");
  }
  std::string_view header = file.substr(8, n);
  if (header.empty() || header[0] != '{') return bad(file_name, "the JSON header does not start with '{'");
  // The writer pads the header with spaces to an 8-byte boundary; trailing spaces are part of the format.
  JsonNode root;
  std::string error;
  if (!parse_json(header, root, error)) return bad(file_name, "header JSON: " + error);
  if (root.kind != JsonNode::Kind::object) return bad(file_name, "the header is not a JSON object");

  struct Span {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Span> spans;
  const size_t first = tensors.size();
  for (const auto& [name, entry] : root.members) {
    if (name == "__metadata__") {
      if (entry.kind != JsonNode::Kind::object) return bad(file_name, "__metadata__ is not an object");
      for (const auto& [k, v] : entry.members) {
        if (v.kind != JsonNode::Kind::string) return bad(file_name, "__metadata__ value of \"" + k + "\" is not a string");
        metadata[k] = v.text;
      }
      continue;
    }
    if (entry.kind != JsonNode::Kind::object) return bad(file_name, "tensor \"" + name + "\" is not an object");
    const JsonNode* dtype = entry.find("dtype");
    const JsonNode* shape = entry.find("shape");
    const JsonNode* offsets = entry.find("data_offsets");
    if (dtype == nullptr || shape == nullptr || offsets == nullptr) {
      return bad(file_name, "tensor \"" + name + "\" lacks dtype, shape or data_offsets");
    }
    TensorView t;
    t.name = name;
    t.file = file_name;
    if (dtype->kind != JsonNode::Kind::string || !dtype_from_name(dtype->text, t.dtype)) {
      return bad(file_name, "tensor \"" + name + "\" has an unknown dtype " +
                                (dtype->kind == JsonNode::Kind::string ? "\"" + dtype->text + "\"" : "(not a string)"));
    }
    if (shape->kind != JsonNode::Kind::array) return bad(file_name, "tensor \"" + name + "\": shape is not a list");
    uint64_t numel = 1;
    for (const auto& d : shape->items) {
      if (d.kind != JsonNode::Kind::number || !d.is_uint) {
        return bad(file_name, "tensor \"" + name + "\": shape holds something other than a non-negative integer");
      }
      t.shape.push_back(d.uint);
      if (mul_overflows(numel, d.uint, numel)) return bad(file_name, "tensor \"" + name + "\": element count overflows");
    }
    t.numel = numel;
    if (offsets->kind != JsonNode::Kind::array || offsets->items.size() != 2 || !offsets->items[0].is_uint ||
        !offsets->items[1].is_uint) {
      return bad(file_name, "tensor \"" + name + "\": data_offsets is not [BEGIN, END]");
    }
    uint64_t begin = offsets->items[0].uint, end = offsets->items[1].uint;
    if (end < begin) return bad(file_name, "tensor \"" + name + "\": data_offsets END is before BEGIN");
    uint64_t bits = 0;
    if (mul_overflows(numel, dtype_bits(t.dtype), bits)) return bad(file_name, "tensor \"" + name + "\": byte size overflows");
    if (bits % 8 != 0) return bad(file_name, "tensor \"" + name + "\": sub-byte tensor does not end on a byte boundary");
    if (end - begin != bits / 8) {
      return bad(file_name, "tensor \"" + name + "\": data_offsets span " + std::to_string(end - begin) +
                                " bytes but shape and dtype need " + std::to_string(bits / 8));
    }
    t.nbytes = end - begin;
    spans.push_back({begin, end, tensors.size()});
    tensors.push_back(std::move(t));
  }
  // The tensors must tile the buffer: sorted by offset, each starts where the previous ended, from 0 to its end.
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  uint64_t at = 0;
  for (const auto& s : spans) {
    if (s.begin != at) {
      std::string name = tensors[s.index].name;
      tensors.resize(first);
      return bad(file_name, "tensor \"" + name + "\" starts at data offset " + std::to_string(s.begin) +
                                (s.begin > at ? " leaving a hole after byte " : " overlapping the tensor that ends at byte ") +
                                std::to_string(at));
    }
    at = s.end;
  }
  uint64_t buffer = file.size() - 8 - n;
  if (at != buffer) {
    tensors.resize(first);
    return bad(file_name, "the tensors cover " + std::to_string(at) + " bytes of data but the file holds " +
                              std::to_string(buffer) + " (truncated, or bytes beyond the last tensor)");
  }
  const char* data = file.data() + 8 + n;
  for (const auto& s : spans) tensors[s.index].data = reinterpret_cast<const uint8_t*>(data + s.begin);
  return Ok{};
}

}  // namespace rldk::ckpt
