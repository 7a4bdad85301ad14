// UTF-8 validity, shared by every writer that must escape what is not valid text (JSON, the terminal filter).
#pragma once

#include <cstddef>
#include <string_view>

namespace rldk {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not valid UTF-8 (overlong
// forms, UTF-16 surrogates and code points above U+10FFFF are invalid; so is a sequence cut by the end of text).
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  if (len == 2 && c < 0xC2) return 0;                              // overlong
  if (len == 3 && c == 0xE0 && byte(i + 1) < 0xA0) return 0;       // overlong
  if (len == 3 && c == 0xED && byte(i + 1) >= 0xA0) return 0;      // UTF-16 surrogate
  if (len == 4 && (c > 0xF4 || (c == 0xF0 && byte(i + 1) < 0x90) || (c == 0xF4 && byte(i + 1) >= 0x90))) return 0;
  return len;
}

// Where an unfinished sequence at the end of `text` starts (a lead byte followed only by continuation bytes, fewer
// than it announces), or text.size() when the text does not end inside a sequence. A stream keeps these bytes
// until the rest arrives.
inline size_t utf8_unfinished_tail(std::string_view text) {
  size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for its lead
    size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    return len > back ? n - back : n;
  }
  return n;
}

}  // namespace rldk
