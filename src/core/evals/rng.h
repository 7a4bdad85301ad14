// The generator behind every bootstrap of rldk evals: xoshiro256** seeded through splitmix64, and bounded draws by
// Lemire's multiply-and-reject. Written out (not std::mt19937 + std::uniform_int_distribution) because the
// standard leaves the distribution's algorithm to each library: the same --seed must give the same replicates on
// every machine and build.
#pragma once

#include <cstdint>

namespace rldk::evals {

__extension__ using Uint128 = unsigned __int128;  // GCC and Clang; the product of two 64-bit words

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& word : s_) {
      seed += 0x9e3779b97f4a7c15ULL;  // splitmix64
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n >= 1, without modulo bias.
  uint64_t below(uint64_t n) {
    Uint128 m = static_cast<Uint128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<Uint128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
};

}  // namespace rldk::evals
