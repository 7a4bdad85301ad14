// The word tokenizer every method shares. ASCII, which is most of the bytes of most corpora, goes through a 128-entry
// class table; other code points are decoded and classified by ICU (general category, the Ideographic property,
// simple lower-case mapping), the well-kept Unicode library Debian ships, rather than tables written here.
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <xxhash.h>

#include <array>
#include <limits>

#include "rldk/contamination.h"

namespace rldk::contamination {
namespace {

enum class Kind : uint8_t { space, punct, letter, digit, ideograph };

constexpr std::array<Kind, 128> ascii_kinds() {
  std::array<Kind, 128> t{};
  for (int c = 0; c < 128; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t[c] = Kind::letter;
    } else if (c >= '0' && c <= '9') {
      t[c] = Kind::digit;
    } else if (c > ' ' && c < 127) {
      t[c] = Kind::punct;  // Python's string.punctuation: every printable ASCII character that is not alphanumeric
    } else {
      t[c] = Kind::space;
    }
  }
  return t;
}
constexpr std::array<Kind, 128> ASCII_KINDS = ascii_kinds();

// Scripts written without spaces between words: each character is a word (as n-gram tools for CJK text do).
bool unspaced_script(UChar32 c) {
  return (c >= 0x3040 && c <= 0x30FF) || u_hasBinaryProperty(c, UCHAR_IDEOGRAPHIC);
}

Kind kind_of(UChar32 c) {
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return unspaced_script(c) ? Kind::ideograph : Kind::letter;
    case U_NON_SPACING_MARK: case U_ENCLOSING_MARK: case U_COMBINING_SPACING_MARK:
      return Kind::letter;  // an accent belongs to its letter
    case U_DECIMAL_DIGIT_NUMBER: return Kind::digit;
    case U_LETTER_NUMBER: case U_OTHER_NUMBER: return Kind::letter;
    case U_DASH_PUNCTUATION: case U_START_PUNCTUATION: case U_END_PUNCTUATION: case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION: case U_INITIAL_PUNCTUATION: case U_FINAL_PUNCTUATION: case U_MATH_SYMBOL:
    case U_CURRENCY_SYMBOL: case U_MODIFIER_SYMBOL: case U_OTHER_SYMBOL:
      return Kind::punct;
    default: return Kind::space;  // separators, controls, format characters, unassigned, surrogates
  }
}

void append_utf8(std::string& out, UChar32 c) {
  char buf[4];
  int32_t len = 0;
  UBool error = false;
  U8_APPEND(reinterpret_cast<uint8_t*>(buf), len, 4, c, error);
  if (!error) out.append(buf, static_cast<size_t>(len));
}

// Walks the text once, calling emit(begin, end, normalised bytes) per word.
template <class Emit>
void for_each_word(std::string_view text, const NormalizeOptions& options, Emit&& emit) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  int32_t length = static_cast<int32_t>(std::min<size_t>(text.size(), std::numeric_limits<int32_t>::max()));
  std::string word;
  int32_t word_begin = -1, word_end = 0;
  auto flush = [&] {
    if (word_begin >= 0) emit(static_cast<uint32_t>(word_begin), static_cast<uint32_t>(word_end), word);
    word.clear();
    word_begin = -1;
  };
  int32_t i = 0;
  while (i < length) {
    int32_t at = i;
    UChar32 c;
    Kind kind;
    if (s[i] < 0x80) {
      c = s[i++];
      kind = ASCII_KINDS[c];
    } else {
      U8_NEXT(s, i, length, c);
      kind = c < 0 ? Kind::space : kind_of(c);  // an ill-formed byte sequence separates words
    }
    switch (kind) {
      case Kind::space: flush(); break;
      case Kind::punct:
        flush();
        if (options.punctuation == Punctuation::keep) {
          append_utf8(word, c);
          word_begin = at;
          word_end = i;
          flush();
        }
        break;
      case Kind::ideograph:
        flush();
        append_utf8(word, c);
        word_begin = at;
        word_end = i;
        flush();
        break;
      case Kind::digit:
      case Kind::letter:
        if (word_begin < 0) word_begin = at;
        word_end = i;
        if (kind == Kind::digit && options.digits == Digits::mask) {
          word.push_back('0');
        } else if (c < 0x80) {
          word.push_back(static_cast<char>(options.lowercase && c >= 'A' && c <= 'Z' ? c + 32 : c));
        } else {
          append_utf8(word, options.lowercase ? u_tolower(c) : c);
        }
        break;
    }
  }
  flush();
}

}  // namespace

void tokenize(std::string_view text, const NormalizeOptions& options, std::vector<Word>& words) {
  words.clear();
  for_each_word(text, options, [&](uint32_t begin, uint32_t end, const std::string& w) {
    words.push_back(Word{begin, end, XXH3_64bits(w.data(), w.size())});
  });
}

std::string normalize(std::string_view text, const NormalizeOptions& options) {
  std::string out;
  for_each_word(text, options, [&](uint32_t, uint32_t, const std::string& w) {
    if (!out.empty()) out.push_back(' ');
    out += w;
  });
  return out;
}

}  // namespace rldk::contamination
