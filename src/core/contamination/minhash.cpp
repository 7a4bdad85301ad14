// MinHash exactly as datasketch computes it, so its estimates can be checked against datasketch value for value:
// per permutation k, h -> ((a_k * h + b_k) mod 2^64) mod (2^61 - 1), truncated to 32 bits, minimised over the
// shingles. (datasketch multiplies in NumPy uint64, which wraps at 2^64 before the Mersenne reduction; the wrap is
// reproduced rather than "fixed", or the signatures would differ.) The kernel is hand-written with AVX2 intrinsics
// (no library computes datasketch's exact arithmetic natively) and chosen at run time when the CPU has AVX2; the
// scalar loop is the definition, and the fallback elsewhere.
#include <xxhash.h>

#include <immintrin.h>

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

// One permutation, exactly as datasketch: x = a*h + b mod 2^64, r = x mod (2^61 - 1), low 32 bits. The Mersenne
// fold x = hi * 2^61 + lo = hi + lo (mod p), hi <= 7, leaves r <= p + 7, so r >= p exactly when r + 1 reaches 2^61;
// then r - p = r + 1 - 2^61 has the low 32 bits of r, plus one.
inline uint64_t permuted(uint64_t a, uint64_t b, uint64_t h) {
  uint64_t x = a * h + b;
  uint64_t r = (x & MERSENNE_61) + (x >> 61);
  return (r + ((r + 1) >> 61)) & 0xFFFFFFFFULL;
}

void update_mins_scalar(const uint32_t* shingles, size_t count, const uint64_t* a, const uint64_t* b, size_t perms,
                        int64_t* mins) {
  for (size_t s = 0; s < count; ++s) {
    for (size_t k = 0; k < perms; ++k) {
      int64_t v = static_cast<int64_t>(permuted(a[k], b[k], shingles[s]));
      mins[k] = v < mins[k] ? v : mins[k];
    }
  }
}

// permuted() for four permutations (a split into its low and high 32 bits) and one shingle h.
__attribute__((target("avx2"))) inline __m256i permuted4(__m256i a_lo, __m256i a_hi, __m256i b, __m256i h) {
  const __m256i prime = _mm256_set1_epi64x(static_cast<long long>(MERSENNE_61));
  __m256i x = _mm256_add_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(a_lo, h), _mm256_slli_epi64(_mm256_mul_epu32(a_hi, h), 32)), b);
  __m256i r = _mm256_add_epi64(_mm256_and_si256(x, prime), _mm256_srli_epi64(x, 61));
  r = _mm256_add_epi64(r, _mm256_srli_epi64(_mm256_add_epi64(r, _mm256_set1_epi64x(1)), 61));
  return _mm256_and_si256(r, _mm256_set1_epi64x(0xFFFFFFFFLL));
}

// AVX2, 8 permutations at a time held in registers while every shingle passes through (the shingles stay in L1).
// AVX2 has no 64-bit multiply: a*h mod 2^64 = a_lo*h + ((a_hi*h mod 2^32) << 32), two 32x32->64 multiplies. The
// values are below 2^32, so the 64-bit lanes' minimum is the 32-bit unsigned minimum (high halves are both zero).
// Written with intrinsics because the compiler's vectorisation of the scalar loop spent a third of its instructions
// on shuffles and memory traffic for the minima (measured: 1.6 G -> see docs/contamination.md).
__attribute__((target("avx2"))) void update_mins_avx2(const uint32_t* shingles, size_t count, const uint64_t* a,
                                                      const uint64_t* b, size_t perms, int64_t* mins) {
  size_t k = 0;
  for (; k + 8 <= perms; k += 8) {
    __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k));
    __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k + 4));
    __m256i ah0 = _mm256_srli_epi64(a0, 32), ah1 = _mm256_srli_epi64(a1, 32);
    __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k));
    __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k + 4));
    __m256i m0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mins + k));
    __m256i m1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mins + k + 4));
    for (size_t s = 0; s < count; ++s) {
      __m256i h = _mm256_set1_epi64x(static_cast<long long>(shingles[s]));
      m0 = _mm256_min_epu32(m0, permuted4(a0, ah0, b0, h));
      m1 = _mm256_min_epu32(m1, permuted4(a1, ah1, b1, h));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(mins + k), m0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(mins + k + 4), m1);
  }
  if (k < perms) update_mins_scalar(shingles, count, a + k, b + k, perms - k, mins + k);
}

// affine32: one 32-bit multiply-add per permutation on fmix32(h), computed once per shingle by the caller. Eight
// lanes per AVX2 vector; the compiler vectorises this loop over the permutations (32-bit lanes need no shuffles).
inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  return h ^ (h >> 16);
}

__attribute__((target_clones("avx2", "default"))) void update_mins_affine32(const uint32_t* shingles, size_t count,
                                                                            const uint32_t* a, const uint32_t* b,
                                                                            size_t perms, uint32_t* mins) {
  for (size_t s = 0; s < count; ++s) {
    uint32_t h = fmix32(shingles[s]);
    for (size_t k = 0; k < perms; ++k) {
      uint32_t v = a[k] * h + b[k];
      mins[k] = v < mins[k] ? v : mins[k];
    }
  }
}

const bool HAVE_AVX2 = __builtin_cpu_supports("avx2");

// Simpson's rule on 2000 intervals: the integrands are polynomials of degree <= num_perm on [0, 1], smooth enough that
// this agrees with SciPy's quad (datasketch's integrator) far below the gaps between neighbouring (b, r) choices.
constexpr int INTERVALS = 2000;

// Simpson weights times h for the grid of [lo, hi], and log(1 - s^r) at its points for one r: then
// (1 - s^r)^b = exp(b log(1 - s^r)) costs one exp per point for every b (instead of two pow calls).
struct Grid {
  std::vector<double> weight, s;
  Grid(double lo, double hi) {
    double h = (hi - lo) / INTERVALS;
    for (int i = 0; i <= INTERVALS; ++i) {
      s.push_back(lo + i * h);
      weight.push_back(h / 3 * (i == 0 || i == INTERVALS ? 1 : i % 2 ? 4 : 2));
    }
  }
  std::vector<double> log_not_sr(double r) const {
    std::vector<double> out;
    for (double x : s) out.push_back(std::log1p(-std::pow(x, r)));
    return out;
  }
};

}  // namespace

const char* scheme_name(MinHashScheme s) { return s == MinHashScheme::affine32 ? "affine32" : "legacy"; }

Permutations minhash_permutations(size_t num_perm, uint64_t seed, MinHashScheme scheme) {
  Permutations p;
  p.scheme = scheme;
  uint64_t state = seed;
  for (size_t k = 0; k < num_perm; ++k) {
    if (scheme == MinHashScheme::legacy) {
      p.a.push_back(1 + splitmix64(state) % (MERSENNE_61 - 1));
      p.b.push_back(splitmix64(state) % MERSENNE_61);
    } else {
      p.a.push_back((splitmix64(state) & 0xFFFFFFFFULL) | 1);  // odd: a bijection mod 2^32
      p.b.push_back(splitmix64(state) & 0xFFFFFFFFULL);
    }
  }
  return p;
}

MinHasher::MinHasher(const Permutations& perms) : a_(perms.a), b_(perms.b), scheme_(perms.scheme) {
  for (size_t k = 0; k < a_.size(); ++k) {
    a32_.push_back(static_cast<uint32_t>(a_[k]));
    b32_.push_back(static_cast<uint32_t>(b_[k]));
  }
}

void MinHasher::signature(const std::vector<uint32_t>& shingles, std::vector<uint32_t>& sig) const {
  if (scheme_ == MinHashScheme::affine32) {
    sig.assign(b_.size(), 0xFFFFFFFFu);
    update_mins_affine32(shingles.data(), shingles.size(), a32_.data(), b32_.data(), b32_.size(), sig.data());
    return;
  }
  mins_.assign(b_.size(), EMPTY_MIN);
  (HAVE_AVX2 ? update_mins_avx2 : update_mins_scalar)(shingles.data(), shingles.size(), a_.data(), b_.data(),
                                                      b_.size(), mins_.data());
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
  const Grid below(0.0, threshold), above(threshold, 1.0);
  double best = INFINITY;
  std::pair<size_t, size_t> choice{0, 0};
  // datasketch's loop order (b outer, r inner, first minimum kept), with each r's logs computed once.
  std::vector<std::vector<double>> log_below(num_perm + 1), log_above(num_perm + 1);
  for (size_t r = 1; r <= num_perm; ++r) {
    log_below[r] = below.log_not_sr(static_cast<double>(r));
    log_above[r] = above.log_not_sr(static_cast<double>(r));
  }
  for (size_t b = 1; b <= num_perm; ++b) {
    for (size_t r = 1; r <= num_perm / b; ++r) {
      double bd = static_cast<double>(b), fp = 0, fn = 0;
      // False positives: P(s) = 1 - (1 - s^r)^b below the threshold; false negatives: 1 - P(s) above it.
      for (size_t i = 0; i < below.s.size(); ++i) fp += below.weight[i] * (1 - std::exp(bd * log_below[r][i]));
      for (size_t i = 0; i < above.s.size(); ++i) fn += above.weight[i] * std::exp(bd * log_above[r][i]);
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
