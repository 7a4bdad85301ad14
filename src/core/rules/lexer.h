// Splits rule-expression text into tokens. Keywords (and, or, not, in, if, else, true, null, ...) are plain
// identifiers here; the parser decides, so that `tags.if` can still name a tag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/result.h"

namespace rldk::rules {

enum class TokenKind : uint8_t { end, number, string, identifier, symbol };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view source;  // the token's text as written (a slice of the input)
  uint32_t offset = 0;      // byte offset of the token in the input
  double number = 0.0;      // number tokens
  std::string text;         // string tokens: the decoded contents
};

// Tokens of `text`, always ending with one `end` token; or an error at the offending character.
Result<std::vector<Token>> tokenize(std::string_view text);

// Where `offset` lies in `text`, as used in Error::context: "column N", or "line L, column N" when the text has
// several lines. Columns are 1-based and count characters (UTF-8 continuation bytes are not counted).
std::string describe_position(std::string_view text, size_t offset);

// How a token is named in "found ..." parts of messages: "end of input", "'>'", "number 3", "name 'foo'".
std::string describe_token(const Token& token);

// True for names that can follow `tags.` without quotes: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view text);

}  // namespace rldk::rules
