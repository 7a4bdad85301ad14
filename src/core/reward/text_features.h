// Surface features of a completion that the reward checks need, computed once per sample as it streams past.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/reward_health.h"

namespace rldk::reward {

struct TextFeatures {
  uint32_t chars = 0;       // Unicode code points (bytes that do not continue a UTF-8 sequence)
  uint32_t words = 0;       // runs of non-whitespace separated by ASCII whitespace
  double repetition = 0;    // 1 - distinct word 3-grams / word 3-grams; 0 below 3 words (nothing can repeat)
  // Markup, counted per line after leading spaces and tabs.
  uint32_t list_items = 0;  // lines starting "- ", "* ", "+ " or digits then ". " / ")"
  uint32_t headers = 0;     // ATX headers: 1 to 6 '#' then a space or the end of the line
  uint32_t code_blocks = 0; // fenced code blocks: lines starting ```, two fences a block (an unclosed one counts)
  uint32_t non_ascii = 0;   // code points outside ASCII
};

// `scratch` holds the 3-gram hashes between calls, so a stream of samples allocates once.
TextFeatures text_features(std::string_view text, std::vector<uint64_t>& scratch);

// The first `max_chars` code points of `text` (whole UTF-8 sequences only); `truncated` says whether any were cut.
std::string truncate_chars(std::string_view text, size_t max_chars, bool& truncated);

// The shortcut probes' per-sample feature vector: the built-in features first (their names in BUILTIN_FEATURES),
// then one count per phrase feature.
inline constexpr std::array<const char*, 6> BUILTIN_FEATURES = {"log_length",  "repetition",  "list_items",
                                                                 "headers",     "code_blocks", "non_ascii_share"};
inline constexpr size_t LOG_LENGTH_FEATURE = 0;  // reported, judged by length_bias instead

// Counts phrase occurrences for every phrase feature in one pass over the text: phrases are lower-cased and
// bucketed by their first byte, and only positions that start a word are tried, so the cost is one scan plus a
// compare per word start whose first letter begins some phrase.
class PhraseMatcher {
 public:
  PhraseMatcher() = default;
  explicit PhraseMatcher(const std::vector<ShortcutPhraseFeature>& features);
  size_t features() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  // Adds each feature's count of whole-word, ASCII case-insensitive matches to out[0 .. features()).
  void count(std::string_view text, float* out) const;

 private:
  struct Phrase {
    std::string text;  // lower-cased
    size_t feature = 0;
  };
  std::vector<std::string> names_;
  std::array<std::vector<Phrase>, 256> by_first_;
  std::array<uint64_t, 1024> pairs_{};  // bitset over (first << 8 | second) lower-cased bytes a phrase starts with
};

// All features of one sample into out[0 .. BUILTIN_FEATURES.size() + matcher.features()).
void shortcut_features(std::string_view text, const TextFeatures& f, const PhraseMatcher& matcher, float* out);

}  // namespace rldk::reward
