// UTF-16 text with a byte-order mark, transcoded to the UTF-8 every reader expects. Windows PowerShell's
// `python train.py > train.log` writes a trainer's console as UTF-16LE with a mark; files and live streams alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rldk::io {

// Whether `head` (at least its first two bytes) opens with a UTF-16 byte-order mark: true big-endian, false
// little-endian, nullopt no mark.
std::optional<bool> utf16_byte_order(std::string_view head);

// Written here rather than with iconv: the mapping is a dozen lines, and a code unit or surrogate pair split across
// two chunks is simply kept for the next one. Unpaired surrogates become U+FFFD, as does an odd last byte.
class Utf16Decoder {
 public:
  explicit Utf16Decoder(bool big_endian) : big_endian_(big_endian) {}
  // Appends the UTF-8 of `bytes` (which follow the byte-order mark) to `out`.
  void decode(std::string_view bytes, std::string& out);
  // The end of the data: what is left of an unfinished unit or pair.
  void finish(std::string& out);

 private:
  uint32_t unit_at(size_t i) const;
  std::string carry_;  // at most 3 bytes of an unfinished unit or surrogate pair
  bool big_endian_;
};

}  // namespace rldk::io
