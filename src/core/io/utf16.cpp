#include "io/utf16.h"

#include <cstdint>

#include "io/utf8.h"

namespace rldk::io {
namespace {

constexpr uint32_t REPLACEMENT = 0xFFFD;

}  // namespace

std::optional<bool> utf16_byte_order(std::string_view head) {
  if (head.size() < 2) return std::nullopt;
  auto b0 = static_cast<unsigned char>(head[0]), b1 = static_cast<unsigned char>(head[1]);
  if (b0 == 0xFF && b1 == 0xFE) return false;
  if (b0 == 0xFE && b1 == 0xFF) return true;
  return std::nullopt;
}

uint32_t Utf16Decoder::unit_at(size_t i) const {
  auto b0 = static_cast<unsigned char>(carry_[i]), b1 = static_cast<unsigned char>(carry_[i + 1]);
  return big_endian_ ? (uint32_t{b0} << 8) | b1 : (uint32_t{b1} << 8) | b0;
}

void Utf16Decoder::decode(std::string_view bytes, std::string& out) {
  out.reserve(out.size() + bytes.size());
  // Whole units are decoded straight from `bytes`; carry_ only ever holds the few bytes of an unfinished one.
  carry_.append(bytes);
  size_t i = 0;
  while (carry_.size() - i >= 2) {
    uint32_t unit = unit_at(i);
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      if (carry_.size() - i < 4) break;  // its pair comes with the next chunk
      uint32_t low = unit_at(i + 2);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        append_utf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
        i += 4;
        continue;
      }
      append_utf8(out, REPLACEMENT);
    } else {
      append_utf8(out, unit >= 0xDC00 && unit <= 0xDFFF ? REPLACEMENT : unit);
    }
    i += 2;
  }
  carry_.erase(0, i);
}

void Utf16Decoder::finish(std::string& out) {
  if (!carry_.empty()) append_utf8(out, REPLACEMENT);
  carry_.clear();
}

}  // namespace rldk::io
