#include "io/lenient_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rldk::io {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Characters of a bare token: numbers, words (nan, None, True) and dotted wrapper names (np.float64).
bool is_token_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' ||
         c == '+' || c == '_';
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool equals_any(std::string_view s, std::initializer_list<std::string_view> words) {
  for (auto w : words) {
    if (s == w) return true;
  }
  return false;
}

}  // namespace

bool parse_number(std::string_view text, double& value) {
  if (text.empty()) return false;
  bool negative = false;
  std::string_view body = text;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return false;
  // Words first: from_chars would accept "infinity" and "nan(...)" too, but not "Infinity"'s JSON spelling rules.
  if (equals_any(body, {"nan", "NaN", "NAN"})) {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (equals_any(body, {"inf", "Inf", "INF", "Infinity", "infinity"})) {
    value = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  char first = body.front();
  if (!((first >= '0' && first <= '9') || first == '.')) return false;
  double parsed = 0.0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), parsed, std::chars_format::general);
  if (ptr != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // 1e400 is, for a training metric, an overflow to infinity; 1e-400 an underflow to zero. strtod knows which.
    char buffer[64];
    if (body.size() >= sizeof(buffer)) return false;
    std::memcpy(buffer, body.data(), body.size());
    buffer[body.size()] = '\0';
    parsed = std::strtod(buffer, nullptr);
  } else if (ec != std::errc()) {
    return false;
  }
  value = negative ? -parsed : parsed;
  return true;
}

bool LenientParser::fail(std::string message) {
  if (error_.message.empty()) {
    error_.offset = pos_;
    error_.message = std::move(message);
  }
  return false;
}

void LenientParser::skip_space() {
  while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
}

char LenientParser::peek() {
  skip_space();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool LenientParser::consume(char c) {
  if (peek() != c) return false;
  ++pos_;
  return true;
}

bool LenientParser::string_into(std::string& arena, uint32_t& begin, uint32_t& len) {
  char quote = text_[pos_];
  ++pos_;
  begin = static_cast<uint32_t>(arena.size());
  for (;;) {
    size_t run = pos_;
    while (run < text_.size() && text_[run] != quote && text_[run] != '\\') ++run;
    arena.append(text_.data() + pos_, run - pos_);
    pos_ = run;
    if (pos_ >= text_.size()) return fail("unterminated string");
    if (text_[pos_] == quote) {
      ++pos_;
      break;
    }
    // An escape sequence.
    if (pos_ + 1 >= text_.size()) return fail("unterminated string");
    char e = text_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'n': arena.push_back('\n'); break;
      case 't': arena.push_back('\t'); break;
      case 'r': arena.push_back('\r'); break;
      case 'b': arena.push_back('\b'); break;
      case 'f': arena.push_back('\f'); break;
      case '/': case '\\': case '"': case '\'': arena.push_back(e); break;
      case 'x': case 'u': {
        size_t digits = e == 'x' ? 2 : 4;
        if (pos_ + digits > text_.size()) return fail("truncated escape in string");
        uint32_t cp = 0;
        for (size_t i = 0; i < digits; ++i) {
          int h = hex_value(text_[pos_ + i]);
          if (h < 0) return fail("bad escape in string");
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        pos_ += digits;
        // A UTF-16 surrogate pair written as two \u escapes.
        if (e == 'u' && cp >= 0xD800 && cp < 0xDC00 && pos_ + 6 <= text_.size() && text_[pos_] == '\\' &&
            text_[pos_ + 1] == 'u') {
          uint32_t low = 0;
          bool ok = true;
          for (size_t i = 0; i < 4; ++i) {
            int h = hex_value(text_[pos_ + 2 + i]);
            ok = ok && h >= 0;
            low = low * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
          }
          if (ok && low >= 0xDC00 && low < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            pos_ += 6;
          }
        }
        append_utf8(arena, cp);
        break;
      }
      default:  // Python keeps unknown escapes as written.
        arena.push_back('\\');
        arena.push_back(e);
    }
  }
  len = static_cast<uint32_t>(arena.size() - begin);
  return true;
}

bool LenientParser::string(std::string& out) {
  char c = peek();
  if (c != '"' && c != '\'') return fail("expected a string");
  out.clear();
  uint32_t b = 0, l = 0;
  return string_into(out, b, l);
}

bool LenientParser::number_or_word(FlatRecord& out, ValueKind& kind, double& number, uint32_t& str_begin,
                                   uint32_t& str_len, int depth) {
  if (depth > MAX_DEPTH) return fail("nesting is too deep");
  char c = peek();
  if (c == '"' || c == '\'') {
    kind = ValueKind::string;
    return string_into(out.arena, str_begin, str_len);
  }
  size_t start = pos_;
  while (pos_ < text_.size() && is_token_char(text_[pos_])) ++pos_;
  std::string_view token = text_.substr(start, pos_ - start);
  if (token.empty()) return fail(c == '\0' ? "expected a value, found the end" : "expected a value");
  if (peek() == '(') {
    // A wrapper such as np.float64(0.5) or tensor(0.5, device='cuda:0'): the value is the first argument.
    ++pos_;
    if (!number_or_word(out, kind, number, str_begin, str_len, depth + 1)) return false;
    int parens = 1;
    char quote = 0;
    while (pos_ < text_.size() && parens > 0) {
      char d = text_[pos_++];
      if (quote) {
        if (d == '\\') ++pos_;
        else if (d == quote) quote = 0;
      } else if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(') {
        ++parens;
      } else if (d == ')') {
        --parens;
      }
    }
    if (parens > 0) return fail("unclosed '(' in wrapped value");
    return true;
  }
  if (equals_any(token, {"null", "None"})) {
    kind = ValueKind::null;
    number = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (equals_any(token, {"true", "True"})) {
    kind = ValueKind::boolean;
    number = 1.0;
    return true;
  }
  if (equals_any(token, {"false", "False"})) {
    kind = ValueKind::boolean;
    number = 0.0;
    return true;
  }
  if (!parse_number(token, number)) {
    pos_ = start;
    return fail("not a number: '" + std::string(token.substr(0, 40)) + "'");
  }
  kind = ValueKind::number;
  return true;
}

bool LenientParser::value_into(FlatRecord& out, uint32_t key_begin, uint32_t key_len, uint32_t depth) {
  char c = peek();
  if (c == '{') return object_into(out, key_begin, key_len, depth + 1);
  if (c == '[' || c == '(') {
    ++out.skipped_lists;
    return skip_value_at(static_cast<int>(depth) + 1);
  }
  FlatField f{key_begin, key_len, depth, ValueKind::number, 0.0, 0, 0};
  if (!number_or_word(out, f.kind, f.number, f.str_begin, f.str_len, static_cast<int>(depth))) return false;
  out.fields.push_back(f);
  return true;
}

bool LenientParser::object_into(FlatRecord& out, uint32_t prefix_begin, uint32_t prefix_len, uint32_t depth) {
  if (depth > MAX_DEPTH) return fail("nesting is too deep");
  if (!consume('{')) return fail("expected '{'");
  if (consume('}')) return true;
  for (;;) {
    char c = peek();
    if (c != '"' && c != '\'') return fail(c == '\0' ? "unexpected end inside an object" : "expected a quoted key");
    uint32_t key_begin = static_cast<uint32_t>(out.arena.size());
    if (prefix_len > 0 || depth > 0) {
      out.arena.append(out.arena.data() + prefix_begin, prefix_len);  // self-append is safe for std::string
      out.arena.push_back('/');
    }
    uint32_t b = 0, l = 0;
    if (!string_into(out.arena, b, l)) return false;
    uint32_t key_len = static_cast<uint32_t>(out.arena.size() - key_begin);
    if (!consume(':')) return fail("expected ':' after a key");
    if (!value_into(out, key_begin, key_len, depth)) return false;
    if (consume(',')) {
      if (consume('}')) return true;  // a trailing comma, as Python tolerates in literals
      continue;
    }
    if (consume('}')) return true;
    return fail(at_end() ? "unexpected end inside an object" : "expected ',' or '}'");
  }
}

bool LenientParser::flat_object(FlatRecord& out, std::string_view prefix) {
  uint32_t begin = static_cast<uint32_t>(out.arena.size());
  out.arena.append(prefix);
  uint32_t depth = prefix.empty() ? 0 : 1;
  return object_into(out, begin, static_cast<uint32_t>(prefix.size()), depth);
}

bool LenientParser::scalar(FlatRecord& out, ValueKind& kind, double& number, std::string_view& str) {
  char c = peek();
  if (c == '{' || c == '[') return fail("expected a scalar value");
  uint32_t b = 0, l = 0;
  if (!number_or_word(out, kind, number, b, l, 0)) return false;
  if (kind == ValueKind::string) str = std::string_view(out.arena).substr(b, l);
  return true;
}

bool LenientParser::skip_value_at(int depth) {
  if (depth > MAX_DEPTH) return fail("nesting is too deep");
  char c = peek();
  if (c == '{' || c == '[' || c == '(') {
    char close = c == '{' ? '}' : (c == '[' ? ']' : ')');
    ++pos_;
    if (consume(close)) return true;
    for (;;) {
      if (c == '{') {
        char q = peek();
        if (q != '"' && q != '\'') return fail("expected a quoted key");
        std::string scratch;
        uint32_t b = 0, l = 0;
        if (!string_into(scratch, b, l)) return false;
        if (!consume(':')) return fail("expected ':' after a key");
      }
      if (!skip_value_at(depth + 1)) return false;
      if (consume(',')) {
        if (consume(close)) return true;
        continue;
      }
      if (consume(close)) return true;
      return fail(at_end() ? "unexpected end inside a list or object" : "expected ',' or a closing bracket");
    }
  }
  FlatRecord scratch;
  ValueKind kind;
  double number = 0;
  uint32_t b = 0, l = 0;
  return number_or_word(scratch, kind, number, b, l, depth);
}

bool LenientParser::skip_value() { return skip_value_at(0); }

bool parse_flat_object(std::string_view text, FlatRecord& out, ParseError& error) {
  LenientParser parser(text);
  out.clear();
  bool ok = parser.flat_object(out);
  if (ok) {
    parser.skip_space();
    if (!parser.at_end()) {
      error = {parser.offset(), "unexpected text after the object"};
      return false;
    }
    return true;
  }
  error = parser.error();
  return false;
}

}  // namespace rldk::io
