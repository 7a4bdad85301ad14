// Internal pieces of the n-gram hashing that the kernels inline (the public entry points are in contamination.h).
#pragma once

#include <cstdint>

#include "rldk/contamination.h"

namespace rldk::contamination {

inline constexpr uint64_t ROLLING_BASE = 0x9E3779B97F4A7C15ULL;  // odd: multiplying by it is invertible mod 2^64

inline uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// The key of an n-gram: its polynomial hash with n folded in, mixed. Never 0 (0 marks an empty table slot).
inline uint64_t mix_ngram(uint64_t polynomial, uint64_t n) {
  uint64_t k = fmix64(polynomial + n * 0xD6E8FEB86659FD93ULL);
  return k == 0 ? 1 : k;
}

}  // namespace rldk::contamination
