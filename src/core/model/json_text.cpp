#include "model/json_text.h"

#include <charconv>
#include <cmath>

namespace rldk {

void append_double(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out.append(buffer, end);
  }
}

std::string format_double(double value) {
  std::string out;
  append_double(out, value);
  return out;
}

namespace {
// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not valid UTF-8.
size_t utf8_sequence_length(std::string_view text, size_t i) {
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
}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static const char* HEX = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += "\\ufffd";  // an invalid byte becomes U+FFFD so the output stays valid JSON
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(HEX[c >> 4]);
          out.push_back(HEX[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

}  // namespace rldk
