#include "reward/text_features.h"

#include <algorithm>
#include <functional>

namespace rldk::reward {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool continues_sequence(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Order-sensitive combination of three word hashes (boost::hash_combine's mixing); a collision only makes two
// different 3-grams count as one, at odds of about 2^-64 per pair.
uint64_t combine(uint64_t seed, uint64_t h) { return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

}  // namespace

TextFeatures text_features(std::string_view text, std::vector<uint64_t>& scratch) {
  TextFeatures f;
  scratch.clear();
  uint64_t previous[2] = {0, 0};
  std::hash<std::string_view> hash;
  size_t i = 0;
  for (char c : text) f.chars += continues_sequence(c) ? 0 : 1;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    uint64_t h = hash(text.substr(start, i - start));
    ++f.words;
    if (f.words >= 3) scratch.push_back(combine(combine(previous[0], previous[1]), h));
    previous[0] = previous[1];
    previous[1] = h;
  }
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

}  // namespace rldk::reward
