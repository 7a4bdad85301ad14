#include "model/json_text.h"

#include "model/utf8.h"

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
