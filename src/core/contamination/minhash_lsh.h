// MinHash signatures and the LSH band tables of the eval side (internal; the datasketch-compatible definitions are
// documented in contamination.h).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rldk/contamination.h"

namespace rldk::contamination {

// Signatures with one set of permutations. Not thread-safe (a scratch buffer): one per worker.
class MinHasher {
 public:
  explicit MinHasher(const Permutations& perms);
  void signature(const std::vector<uint32_t>& shingles, std::vector<uint32_t>& sig) const;

 private:
  std::vector<uint64_t> a_, b_;
  std::vector<uint32_t> a32_, b32_;  // affine32's multipliers and offsets
  MinHashScheme scheme_;
  mutable std::vector<int64_t> mins_;
};

// b tables of r rows each: two signatures are candidates when all r values of some band agree.
class LshIndex {
 public:
  LshIndex(size_t bands, size_t rows);
  void insert(const std::vector<uint32_t>& sig, uint32_t id);
  // Ids sharing at least one band with `sig`, sorted, each once.
  void candidates(const std::vector<uint32_t>& sig, std::vector<uint32_t>& out) const;

 private:
  uint64_t band_key(const std::vector<uint32_t>& sig, size_t band) const;
  size_t bands_, rows_;
  std::vector<std::unordered_map<uint64_t, std::vector<uint32_t>>> tables_;
};

}  // namespace rldk::contamination
