#include "rules/lexer.h"

#include <array>
#include <charconv>
#include <string>
#include <system_error>

namespace rldk::rules {
namespace {

// Guards are a line or two; the bound keeps token offsets in 32 bits and hostile input cheap to reject.
constexpr size_t MAX_EXPRESSION_BYTES = 64 * 1024;

// Quoted excerpts in messages are cut here so that a runaway string does not fill the terminal.
constexpr size_t MAX_EXCERPT = 24;

// Multi-character operators first: the lexer takes the longest match.
constexpr std::array<std::string_view, 8> TWO_CHAR_SYMBOLS = {"<=", ">=", "==", "!=", "**", "&&", "||", "//"};
constexpr std::string_view ONE_CHAR_SYMBOLS = "<>!*/%+-()[],.";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Error error_at(std::string_view text, size_t offset, std::string message) {
  return Error{ErrorCode::invalid_argument, std::move(message), describe_position(text, offset)};
}

// A printable rendering of one byte for "unexpected character" messages.
std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  constexpr std::string_view HEX = "0123456789abcdef";
  return std::string("byte 0x") + HEX[u >> 4] + HEX[u & 0xf];
}

std::string excerpt(std::string_view s) {
  if (s.size() <= MAX_EXCERPT) return std::string(s);
  return std::string(s.substr(0, MAX_EXCERPT)) + "...";
}

// Scans a number starting at `i`: digits [. digits] [e [+-] digits], or . digits. Returns the end offset, or npos
// when the text there is not a well-formed number.
size_t scan_number(std::string_view text, size_t i) {
  size_t digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  }
  if (digits == 0) return std::string_view::npos;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent_digits = 0;
    while (i < text.size() && is_digit(text[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return std::string_view::npos;
  }
  return i;
}

// Decodes a quoted string starting at the quote `i`; sets `end` past the closing quote.
Result<std::string> scan_string(std::string_view text, size_t i, size_t& end) {
  const char quote = text[i];
  std::string out;
  for (size_t j = i + 1; j < text.size(); ++j) {
    char c = text[j];
    if (c == quote) {
      end = j + 1;
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (j + 1 >= text.size()) break;
    char e = text[++j];
    switch (e) {
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      default:
        return error_at(text, j - 1, "unknown escape '\\" + std::string(1, e) +
                                         "' in string; known escapes: \\\\ \\' \\\" \\n \\t \\r");
    }
  }
  return error_at(text, i, std::string("unterminated string: the ") + quote + " here is never closed");
}

}  // namespace

bool is_identifier(std::string_view text) {
  if (text.empty() || !is_ident_start(text[0])) return false;
  for (char c : text) {
    if (!is_ident_char(c)) return false;
  }
  return true;
}

std::string describe_position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t column = 1;
  bool multi_line = text.find('\n') != std::string_view::npos;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++column;
    }
  }
  std::string out = multi_line ? "line " + std::to_string(line) + ", " : std::string();
  return out + "column " + std::to_string(column);
}

std::string describe_token(const Token& token) {
  switch (token.kind) {
    case TokenKind::end: return "end of input";
    case TokenKind::number: return "number " + excerpt(token.source);
    case TokenKind::string: return "string " + excerpt(token.source);
    case TokenKind::identifier: return "'" + excerpt(token.source) + "'";
    case TokenKind::symbol: return "'" + std::string(token.source) + "'";
  }
  return "?";
}

Result<std::vector<Token>> tokenize(std::string_view text) {
  if (text.size() > MAX_EXPRESSION_BYTES) {
    return error_at(text, MAX_EXPRESSION_BYTES, "expression is longer than " +
                                                    std::to_string(MAX_EXPRESSION_BYTES) + " bytes");
  }
  std::vector<Token> tokens;
  size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    Token token;
    token.offset = static_cast<uint32_t>(i);
    if (i >= text.size()) {
      tokens.push_back(std::move(token));
      return tokens;
    }
    char c = text[i];
    size_t end = i + 1;
    if (is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]))) {
      end = scan_number(text, i);
      // A number glued to letters or another dot ("1e", "1.2.3", "3x") is a typo, not two tokens.
      size_t stop = end == std::string_view::npos ? i : end;
      while (stop < text.size() && (is_ident_char(text[stop]) || text[stop] == '.')) ++stop;
      if (end == std::string_view::npos || stop != end) {
        return error_at(text, i, "malformed number '" + excerpt(text.substr(i, stop - i)) + "'");
      }
      auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, token.number);
      if (ec == std::errc::result_out_of_range) {
        return error_at(text, i, "number '" + excerpt(text.substr(i, end - i)) + "' is out of range");
      }
      if (ec != std::errc() || ptr != text.data() + end) {
        return error_at(text, i, "malformed number '" + excerpt(text.substr(i, end - i)) + "'");
      }
      token.kind = TokenKind::number;
    } else if (is_ident_start(c)) {
      while (end < text.size() && is_ident_char(text[end])) ++end;
      token.kind = TokenKind::identifier;
    } else if (c == '"' || c == '\'') {
      auto decoded = scan_string(text, i, end);
      if (!decoded) return decoded.error();
      token.text = std::move(decoded.value());
      token.kind = TokenKind::string;
    } else {
      std::string_view two = text.substr(i, 2);
      bool matched = false;
      for (auto s : TWO_CHAR_SYMBOLS) {
        if (two == s) {
          end = i + 2;
          matched = true;
          break;
        }
      }
      if (matched && two == "//") {
        return error_at(text, i, "unexpected '//'; use '/' to divide");
      }
      if (!matched && ONE_CHAR_SYMBOLS.find(c) == std::string_view::npos) {
        if (c == '=') return error_at(text, i, "unexpected '='; use '==' to compare");
        if (c == '&') return error_at(text, i, "unexpected '&'; use 'and' or '&&'");
        if (c == '|') return error_at(text, i, "unexpected '|'; use 'or' or '||'");
        return error_at(text, i, "unexpected character " + describe_char(c));
      }
      token.kind = TokenKind::symbol;
    }
    token.source = text.substr(i, end - i);
    tokens.push_back(std::move(token));
    i = end;
  }
}

}  // namespace rldk::rules
