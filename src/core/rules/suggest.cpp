#include "rules/suggest.h"

#include <algorithm>
#include <vector>

namespace rldk {
namespace {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of neighbours cost one each.
size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = best;
    }
  }
  return d.back();
}

}  // namespace

// The default of two edits catches a swapped pair or a missing and a wrong letter ("vlaue", "maen"); more suggests
// unrelated names in short words.
std::string_view closest_name(std::string_view word, std::span<const std::string_view> candidates,
                              size_t max_distance) {
  // Words in rules are short; a long token cannot be a typo of a known name and would only cost time.
  constexpr size_t MAX_WORD = 32;
  if (word.size() > MAX_WORD) return {};
  std::string_view best;
  size_t best_distance = max_distance + 1;
  for (auto c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance && d < word.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace rldk
