// Rolling n-gram hashes over word hashes: Rabin-Karp, polynomial in an odd 64-bit base mod 2^64. One multiply-add
// and one multiply-subtract per word, whatever n is (methods.md §4.4 measured 1.4 GB/s). The polynomial keeps word
// order; the final mix (murmur3's fmix64, with n folded in) spreads it over all 64 bits, so the open-addressing
// table can take the low bits as the slot, and n-grams of different lengths never share a key.
#include "contamination/ngram_hash.h"

namespace rldk::contamination {

void ngram_hashes(const std::vector<Word>& words, size_t n, std::vector<uint64_t>& out) {
  out.clear();
  if (n == 0 || words.size() < n) return;
  out.reserve(words.size() - n + 1);
  uint64_t top = 1;  // BASE^(n-1)
  for (size_t i = 1; i < n; ++i) top *= ROLLING_BASE;
  uint64_t h = 0;
  for (size_t i = 0; i < n; ++i) h = h * ROLLING_BASE + words[i].hash;
  out.push_back(mix_ngram(h, n));
  for (size_t i = n; i < words.size(); ++i) {
    h = (h - words[i - n].hash * top) * ROLLING_BASE + words[i].hash;
    out.push_back(mix_ngram(h, n));
  }
}

void shingle_hashes(const std::vector<Word>& words, size_t k, std::vector<uint64_t>& out) {
  if (words.empty()) {
    out.clear();
    return;
  }
  ngram_hashes(words, std::min(k, words.size()), out);
}

}  // namespace rldk::contamination
