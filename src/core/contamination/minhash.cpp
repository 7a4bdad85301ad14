// MinHash exactly as datasketch computes it, so its estimates can be checked against datasketch value for value:
// per permutation k, h -> ((a_k * h + b_k) mod 2^64) mod (2^61 - 1), truncated to 32 bits, minimised over the
// shingles. (datasketch multiplies in NumPy uint64, which wraps at 2^64 before the Mersenne reduction; the wrap is
// reproduced rather than "fixed", or the signatures would differ.) The inner loop runs over the permutations for
// one shingle, so the compiler vectorises it; GCC's target_clones adds an AVX2 build beside the baseline one and
// picks it at load time, keeping the binary portable.
#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "contamination/minhash_lsh.h"
#include "rldk/contamination.h"

namespace rldk::contamination {
namespace {

constexpr uint64_t MERSENNE_61 = (uint64_t{1} << 61) - 1;
constexpr int64_t EMPTY_MIN = 0xFFFFFFFFLL;  // datasketch's initial hash value (_max_hash)

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// a*h + b mod 2^64 with h < 2^32, split so that only 32x32->64 multiplies are needed (AVX2 has no 64-bit multiply),
// then x mod (2^61 - 1) by the Mersenne fold: x = hi * 2^61 + lo = hi + lo (mod p), hi <= 7, so one subtraction.
__attribute__((target_clones("avx2", "default"))) void update_mins(const uint32_t* shingles, size_t count,
                                                                   const uint32_t* a_lo, const uint32_t* a_hi,
                                                                   const uint64_t* b, size_t perms, int64_t* mins) {
  for (size_t s = 0; s < count; ++s) {
    uint64_t h = shingles[s];
    for (size_t k = 0; k < perms; ++k) {
      uint64_t x = uint64_t{a_lo[k]} * h + (uint64_t{static_cast<uint32_t>(a_hi[k] * static_cast<uint32_t>(h))} << 32) +
                   b[k];
      uint64_t r = (x & MERSENNE_61) + (x >> 61);
      r = r >= MERSENNE_61 ? r - MERSENNE_61 : r;
      int64_t v = static_cast<int64_t>(r & 0xFFFFFFFFULL);
      mins[k] = v < mins[k] ? v : mins[k];
    }
  }
}

// Simpson's rule on 2000 intervals: the integrands are polynomials of degree <= num_perm on [0, 1], smooth enough that
// this agrees with SciPy's quad (datasketch's integrator) far below the gaps between neighbouring (b, r) choices.
template <class F>
double integrate(F&& f, double lo, double hi) {
  constexpr int INTERVALS = 2000;
  double h = (hi - lo) / INTERVALS, sum = f(lo) + f(hi);
  for (int i = 1; i < INTERVALS; ++i) sum += f(lo + i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

}  // namespace

Permutations minhash_permutations(size_t num_perm, uint64_t seed) {
  Permutations p;
  uint64_t state = seed;
  for (size_t k = 0; k < num_perm; ++k) {
    p.a.push_back(1 + splitmix64(state) % (MERSENNE_61 - 1));
    p.b.push_back(splitmix64(state) % MERSENNE_61);
  }
  return p;
}

MinHasher::MinHasher(const Permutations& perms) : b_(perms.b) {
  for (uint64_t a : perms.a) {
    a_lo_.push_back(static_cast<uint32_t>(a));
    a_hi_.push_back(static_cast<uint32_t>(a >> 32));
  }
}

void MinHasher::signature(const std::vector<uint32_t>& shingles, std::vector<uint32_t>& sig) const {
  mins_.assign(b_.size(), EMPTY_MIN);
  update_mins(shingles.data(), shingles.size(), a_lo_.data(), a_hi_.data(), b_.data(), b_.size(), mins_.data());
  sig.resize(b_.size());
  for (size_t k = 0; k < b_.size(); ++k) sig[k] = static_cast<uint32_t>(mins_[k]);
}

void minhash_signature(const std::vector<uint32_t>& shingles, const Permutations& perms, std::vector<uint32_t>& sig) {
  MinHasher(perms).signature(shingles, sig);
}

double jaccard_estimate(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() || a.size() != b.size()) return 0;
  size_t same = 0;
  for (size_t k = 0; k < a.size(); ++k) same += a[k] == b[k];
  return static_cast<double>(same) / static_cast<double>(a.size());
}

double exact_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 0;
  size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++both;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(both) / static_cast<double>(a.size() + b.size() - both);
}

std::pair<size_t, size_t> lsh_parameters(double threshold, size_t num_perm, double fp_weight, double fn_weight) {
  double best = INFINITY;
  std::pair<size_t, size_t> choice{0, 0};
  for (size_t b = 1; b <= num_perm; ++b) {
    for (size_t r = 1; r <= num_perm / b; ++r) {
      double bd = static_cast<double>(b), rd = static_cast<double>(r);
      double fp = integrate([&](double s) { return 1 - std::pow(1 - std::pow(s, rd), bd); }, 0.0, threshold);
      double fn = integrate([&](double s) { return std::pow(1 - std::pow(s, rd), bd); }, threshold, 1.0);
      double error = fp * fp_weight + fn * fn_weight;
      if (error < best) {
        best = error;
        choice = {b, r};
      }
    }
  }
  return choice;
}

LshIndex::LshIndex(size_t bands, size_t rows) : bands_(bands), rows_(rows), tables_(bands) {}

uint64_t LshIndex::band_key(const std::vector<uint32_t>& sig, size_t band) const {
  return XXH3_64bits(sig.data() + band * rows_, rows_ * sizeof(uint32_t));
}

void LshIndex::insert(const std::vector<uint32_t>& sig, uint32_t id) {
  for (size_t band = 0; band < bands_; ++band) tables_[band][band_key(sig, band)].push_back(id);
}

void LshIndex::candidates(const std::vector<uint32_t>& sig, std::vector<uint32_t>& out) const {
  out.clear();
  for (size_t band = 0; band < bands_; ++band) {
    auto it = tables_[band].find(band_key(sig, band));
    if (it != tables_[band].end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace rldk::contamination
