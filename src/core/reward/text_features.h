// Surface features of a completion that the reward checks need, computed once per sample as it streams past.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rldk::reward {

struct TextFeatures {
  uint32_t chars = 0;       // Unicode code points (bytes that do not continue a UTF-8 sequence)
  uint32_t words = 0;       // runs of non-whitespace separated by ASCII whitespace
  double repetition = 0;    // 1 - distinct word 3-grams / word 3-grams; 0 below 3 words (nothing can repeat)
};

// `scratch` holds the 3-gram hashes between calls, so a stream of samples allocates once.
TextFeatures text_features(std::string_view text, std::vector<uint64_t>& scratch);

// The first `max_chars` code points of `text` (whole UTF-8 sequences only); `truncated` says whether any were cut.
std::string truncate_chars(std::string_view text, size_t max_chars, bool& truncated);

}  // namespace rldk::reward
