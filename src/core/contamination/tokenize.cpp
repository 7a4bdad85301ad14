// The word tokenizer every method shares; with the n-gram probes it is the hot loop of the whole scan (methods.md §4.4).
// ASCII words, most of the bytes of most corpora, take a fast path: a 256-entry class table, lower-casing into a small
// buffer and an inline hash. A word that meets a byte >= 0x80 is redone by the general path, which decodes code points
// and classifies them with ICU (general category, the Ideographic property, simple lower-case mapping), the well-kept
// Unicode library Debian ships, rather than tables written here. Both paths give the same words and hashes.
#include <emmintrin.h>  // SSE2, part of every x86-64 CPU
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <xxhash.h>

#include <array>
#include <cstring>
#include <limits>

#include "contamination/ngram_hash.h"
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
void for_each_word(std::string_view text, const NormalizeOptions& options, Emit&& emit, bool first_only = false) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  int32_t length = static_cast<int32_t>(std::min<size_t>(text.size(), std::numeric_limits<int32_t>::max()));
  std::string word;
  int32_t word_begin = -1, word_end = 0;
  bool done = false;  // a word was emitted (first_only: the caller wants just one token)
  auto flush = [&] {
    if (word_begin >= 0) {
      emit(static_cast<uint32_t>(word_begin), static_cast<uint32_t>(word_end), word);
      done = true;
    }
    word.clear();
    word_begin = -1;
  };
  int32_t i = 0;
  auto stop = [&] { return first_only && done; };
  while (i < length && !stop()) {
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

// A word's 64-bit hash. Words of up to 16 bytes (nearly all) are mixed inline: calling XXH3 per word was a fifth of
// the scan's time (a call and a length dispatch for a few bytes); longer words go to XXH3. A short word arrives as two
// little-endian words `lo`, `hi` (zero-padded): one multiply and one or two murmur3 finalisers.
inline uint64_t short_word_hash(uint64_t lo, uint64_t hi, size_t len) {
  uint64_t h = lo * 0x9E3779B97F4A7C15ULL ^ (uint64_t{len} << 56);
  if (len > 8) h ^= fmix64(hi ^ 0x2545F4914F6CDD1DULL);
  return fmix64(h);
}
uint64_t word_hash(const char* p, size_t len) {
  if (len > 16) return XXH3_64bits(p, len);
  uint64_t lo = 0, hi = 0;
  for (size_t k = 0; k < len; ++k) {
    uint64_t byte = static_cast<uint8_t>(p[k]);
    if (k < 8) lo |= byte << (8 * k);
    else hi |= byte << (8 * (k - 8));
  }
  return short_word_hash(lo, hi, len);
}

// Byte classes of the fast path: bytes >= 0x80 send the word to the general path.
enum Fast : uint8_t { SPACE, PUNCT, NON_ASCII, LETTER, UPPER, DIGIT };
constexpr std::array<uint8_t, 256> fast_classes() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c >= 0x80) t[c] = NON_ASCII;
    else if (c >= 'a' && c <= 'z') t[c] = LETTER;
    else if (c >= 'A' && c <= 'Z') t[c] = UPPER;
    else if (c >= '0' && c <= '9') t[c] = DIGIT;
    else t[c] = ASCII_KINDS[c] == Kind::punct ? PUNCT : SPACE;
  }
  return t;
}
constexpr std::array<uint8_t, 256> FAST = fast_classes();

// The general path from byte `at` (a word start or a non-ASCII code point) to the end of that one token; returns
// where the scan goes on.
size_t general_token(std::string_view text, size_t at, const NormalizeOptions& options, std::vector<Word>& words) {
  size_t end = at;
  bool emitted = false;
  std::string_view rest = text.substr(at);
  // The first token of `rest` is what we want: stop as soon as one is emitted past a word boundary.
  for_each_word(rest, options, [&](uint32_t b, uint32_t e, const std::string& w) {
    if (emitted) return;
    words.push_back(Word{static_cast<uint32_t>(at + b), static_cast<uint32_t>(at + e), word_hash(w.data(), w.size())});
    end = at + e;
    emitted = true;
  }, /*first_only=*/true);
  if (!emitted) {
    // A separator (space or stripped punctuation, or an ill-formed byte): skip one code point.
    const auto* s = reinterpret_cast<const uint8_t*>(text.data());
    int32_t i = static_cast<int32_t>(at), length = static_cast<int32_t>(text.size());
    UChar32 c;
    U8_NEXT(s, i, length, c);
    (void)c;
    end = static_cast<size_t>(i);
  }
  return end;
}

// SSE2 over 16 bytes: bit k set when byte k is an ASCII letter or digit (bytes >= 0x80 compare as negative: never).
inline uint32_t alnum_mask(__m128i v) {
  __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
  __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                 _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
  __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(letter, digit)));
}

// 16 x 0xFF then 16 x 0: loading at (16 - len) keeps the first len bytes of a vector.
alignas(16) constexpr uint8_t PREFIX_BYTES[32] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                  0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// An ASCII word of fewer than 16 bytes starting at p (16 bytes readable): its length, 0 when it is longer or goes on
// past ASCII (the caller's scalar or general path takes it then), and its normalised bytes packed into lo, hi.
inline size_t short_ascii_word(const uint8_t* p, const NormalizeOptions& options, uint64_t& lo, uint64_t& hi) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  uint32_t ends = ~alnum_mask(v) & 0xFFFFu;
  if (ends == 0) return 0;
  size_t len = static_cast<size_t>(__builtin_ctz(ends));
  if (p[len] >= 0x80) return 0;
  if (options.lowercase) {
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
    v = _mm_add_epi8(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
  }
  if (options.digits == Digits::mask) {
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    v = _mm_or_si128(_mm_andnot_si128(digit, v), _mm_and_si128(digit, _mm_set1_epi8('0')));
  }
  v = _mm_and_si128(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(PREFIX_BYTES + 16 - len)));
  lo = static_cast<uint64_t>(_mm_cvtsi128_si64(v));
  hi = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)));
  return len;
}

}  // namespace

void tokenize(std::string_view text, const NormalizeOptions& options, std::vector<Word>& words) {
  words.clear();
  text = text.substr(0, std::min<size_t>(text.size(), std::numeric_limits<int32_t>::max()));
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  constexpr size_t BUF = 64;
  char buf[BUF];
  size_t i = 0;
  while (i < n) {
    uint8_t cls = FAST[s[i]];
    if (cls == SPACE) {
      ++i;
      continue;
    }
    if (cls == PUNCT) {
      if (options.punctuation == Punctuation::keep) {
        words.push_back(Word{static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1),
                             word_hash(reinterpret_cast<const char*>(s + i), 1)});
      }
      ++i;
      continue;
    }
    if (cls == NON_ASCII) {
      i = general_token(text, i, options, words);
      continue;
    }
    size_t begin = i, len = 0;
    uint64_t lo = 0, hi = 0;  // the first 16 normalised bytes, packed as short_word_hash takes them
    if (i + 16 <= n && (len = short_ascii_word(s + i, options, lo, hi)) > 0) {
      words.push_back(Word{static_cast<uint32_t>(i), static_cast<uint32_t>(i + len), short_word_hash(lo, hi, len)});
      i += len;
      continue;
    }
    while (i < n && (cls = FAST[s[i]]) >= LETTER) {
      uint8_t c = s[i];
      if (cls == UPPER && options.lowercase) c = static_cast<uint8_t>(c + 32);
      if (cls == DIGIT && options.digits == Digits::mask) c = '0';
      if (len < 8) lo |= uint64_t{c} << (8 * len);
      else if (len < 16) hi |= uint64_t{c} << (8 * (len - 8));
      if (len < BUF) buf[len] = static_cast<char>(c);
      ++len;
      ++i;
    }
    if ((i < n && cls == NON_ASCII) || len > BUF) {
      i = general_token(text, begin, options, words);  // the word goes on past ASCII, or is long: the general path
      continue;
    }
    uint64_t h = len <= 16 ? short_word_hash(lo, hi, len) : XXH3_64bits(buf, len);
    words.push_back(Word{static_cast<uint32_t>(begin), static_cast<uint32_t>(i), h});
  }
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
