#include "reward/text_features.h"

#include <algorithm>
#include <cmath>

namespace rldk::reward {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool continues_sequence(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Order-sensitive combination of three word hashes (boost::hash_combine's mixing); a collision only makes two
// different 3-grams count as one, at odds of about 2^-64 per pair.
uint64_t combine(uint64_t seed, uint64_t h) { return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_byte(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }  // on lower-cased text

// Markdown markup of one line (without its newline).
void count_line(std::string_view line, TextFeatures& f) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  line.remove_prefix(i);
  if (line.empty()) return;
  auto space_or_end = [&](size_t at) {
    return at >= line.size() || line[at] == ' ' || line[at] == '\t' || line[at] == '\r';
  };
  char c = line[0];
  if ((c == '-' || c == '*' || c == '+') && line.size() > 1 && (line[1] == ' ' || line[1] == '\t')) {
    ++f.list_items;
  } else if (is_digit(c)) {
    size_t d = 0;
    while (d < line.size() && d < 9 && is_digit(line[d])) ++d;  // "2024 was" is not an item; "12. x" is
    if (d < line.size() && (line[d] == '.' || line[d] == ')') && space_or_end(d + 1)) ++f.list_items;
  } else if (c == '#') {
    size_t h = 0;
    while (h < line.size() && line[h] == '#') ++h;
    if (h <= 6 && space_or_end(h)) ++f.headers;  // "#hashtag" and "#include" are not headers
  } else if (line.starts_with("```")) {
    ++f.code_blocks;  // fences for now; halved below
  }
}


}  // namespace

TextFeatures text_features(std::string_view text, std::vector<uint64_t>& scratch) {
  TextFeatures f;
  scratch.clear();
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    count_line(text.substr(start, end - start), f);
    start = end + 1;
  }
  f.code_blocks = (f.code_blocks + 1) / 2;
  // One pass over the bytes counts code points and non-ASCII ones and hashes each whitespace-separated word as it
  // goes (64-bit FNV-1a, written here because it folds into this loop; a library hash would need a second pass over
  // every word). The hashes only tell 3-grams apart: a collision makes two count as one, at odds of ~2^-64.
  uint64_t previous[2] = {0, 0};
  uint64_t h = 0;
  bool in_word = false;
  auto end_word = [&] {
    ++f.words;
    if (f.words >= 3) scratch.push_back(combine(combine(previous[0], previous[1]), h));
    previous[0] = previous[1];
    previous[1] = h;
    in_word = false;
  };
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    f.chars += (byte & 0xC0) != 0x80;
    f.non_ascii += (byte & 0xC0) == 0xC0;  // a multi-byte sequence's lead byte
    if (is_space(c)) {
      if (in_word) end_word();
      continue;
    }
    if (!in_word) {
      h = 0xcbf29ce484222325ULL;
      in_word = true;
    }
    h = (h ^ byte) * 0x100000001b3ULL;
  }
  if (in_word) end_word();
  if (!scratch.empty()) {
    std::sort(scratch.begin(), scratch.end());
    auto distinct = static_cast<size_t>(std::unique(scratch.begin(), scratch.end()) - scratch.begin());
    f.repetition = 1.0 - static_cast<double>(distinct) / static_cast<double>(scratch.size());
  }
  return f;
}

std::string truncate_chars(std::string_view text, size_t max_chars, bool& truncated) {
  size_t count = 0, i = 0;
  for (; i < text.size(); ++i) {
    if (continues_sequence(text[i])) continue;
    if (count == max_chars) break;
    ++count;
  }
  truncated = i < text.size();
  return std::string(text.substr(0, i));
}

PhraseMatcher::PhraseMatcher(const std::vector<ShortcutPhraseFeature>& features) {
  for (size_t k = 0; k < features.size(); ++k) {
    names_.push_back(features[k].name);
    for (const auto& phrase : features[k].phrases) {
      std::string lowered;
      for (char c : phrase) lowered += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      if (lowered.empty()) continue;  // the loader rejects empty phrases; nothing to match either way
      // Pairs of (first, second) bytes a match can start with; a one-byte phrase admits every second byte, and
      // an apostrophe second also admits the lead byte of U+2019.
      auto first = static_cast<unsigned char>(lowered[0]);
      auto allow = [&](unsigned second) { pairs_[(first << 8 | second) >> 6] |= uint64_t{1} << (second & 63); };
      if (lowered.size() == 1) {
        for (unsigned b = 0; b < 256; ++b) allow(b);
      } else {
        allow(static_cast<unsigned char>(lowered[1]));
        if (lowered[1] == '\'') allow(0xE2);
      }
      by_first_[first].push_back({std::move(lowered), k});
    }
  }
}

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether lower-cased `phrase` matches `text` at `at`, ASCII case-insensitively, a typographic apostrophe U+2019
// in the text standing for ' (so "can\u2019t" matches "can't"). On a match `end` is one past it in the text.
bool matches_at(std::string_view text, size_t at, std::string_view phrase, size_t& end) {
  size_t i = at;
  for (char p : phrase) {
    if (i >= text.size()) return false;
    if (p == '\'' && text[i] == '\xE2' && text.compare(i, 3, "\xE2\x80\x99") == 0) {
      i += 3;
      continue;
    }
    if (lower(text[i]) != p) return false;
    ++i;
  }
  end = i;
  return true;
}

}  // namespace

void PhraseMatcher::count(std::string_view text, float* out) const {
  if (names_.empty()) return;
  // No lower-cased copy: the text is read once, and the (first, second) byte filter turns away almost every word
  // start before any phrase is compared.
  bool previous_is_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = lower(text[i]);
    bool starts_word = !previous_is_word;
    previous_is_word = is_word_byte(c);
    if (!starts_word) continue;  // only at the start of a word
    unsigned pair = static_cast<unsigned>(static_cast<unsigned char>(c)) << 8 |
                    (i + 1 < text.size() ? static_cast<unsigned char>(lower(text[i + 1])) : 0u);
    if (i + 1 < text.size() && !(pairs_[pair >> 6] >> (pair & 63) & 1)) continue;
    for (const Phrase& p : by_first_[static_cast<unsigned char>(c)]) {
      size_t end = 0;
      if (!matches_at(text, i, p.text, end)) continue;
      if (end < text.size() && is_word_byte(lower(text[end])) && is_word_byte(p.text.back())) continue;  // "sorrys"
      out[p.feature] += 1;
    }
  }
}

void shortcut_features(std::string_view text, const TextFeatures& f, const PhraseMatcher& matcher, float* out) {
  // log(1 + words): reward-vs-length effects are closer to linear in log length, and one 2000-word outlier must
  // not dominate a least-squares fit.
  out[0] = static_cast<float>(std::log1p(static_cast<double>(f.words)));
  out[1] = static_cast<float>(f.repetition);
  out[2] = static_cast<float>(f.list_items);
  out[3] = static_cast<float>(f.headers);
  out[4] = static_cast<float>(f.code_blocks);
  out[5] = f.chars == 0 ? 0.0f : static_cast<float>(static_cast<double>(f.non_ascii) / f.chars);
  float* phrases = out + BUILTIN_FEATURES.size();
  std::fill(phrases, phrases + matcher.features(), 0.0f);
  matcher.count(text, phrases);
}

}  // namespace rldk::reward
