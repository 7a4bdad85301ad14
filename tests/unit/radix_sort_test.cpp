// The radix sort behind ranks and two-sample distances agrees with std::sort, keeps ties in arrival order, and
// orders signed zeros, infinities and subnormals as comparisons do.
#include "stats/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "stats/correlation.h"

namespace rldk::stats {
namespace {

std::vector<double> mixed_values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1e3);
  std::vector<double> v;
  const double specials[] = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                             -std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::lowest()};
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 4) {
      case 0: v.push_back(normal(rng)); break;
      case 1: v.push_back(static_cast<double>(static_cast<int64_t>(rng() % 200) - 100)); break;  // many ties
      case 2: v.push_back(specials[rng() % std::size(specials)]); break;
      default: v.push_back(std::ldexp(normal(rng), static_cast<int>(rng() % 200) - 100)); break;
    }
  }
  return v;
}

TEST(RadixSort, AgreesWithStdSortOnLargeAndSmallInputs) {
  for (size_t n : {0u, 1u, 7u, 511u, 512u, 5000u, 100000u}) {
    std::vector<double> v = mixed_values(n, n + 1), want = v;
    std::sort(want.begin(), want.end());
    sort_values(v);
    ASSERT_EQ(v.size(), want.size());
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], want[i]) << "n = " << n << ", i = " << i;
  }
}

TEST(RadixSort, OrderIsStableAndRanksMatchTheDefinition) {
  std::vector<double> v = mixed_values(20000, 7);
  auto order = sorted_order(v);
  for (size_t i = 1; i < order.size(); ++i) {
    ASSERT_LE(v[order[i - 1].index], v[order[i].index]);
    if (order[i - 1].key == order[i].key) {
      ASSERT_LT(order[i - 1].index, order[i].index);
    }
  }
  // Average ranks by brute force on a small slice: 1 + (number below) + (number equal - 1) / 2.
  std::vector<double> small(v.begin(), v.begin() + 2000);
  std::vector<double> ranks = average_ranks(small);
  for (size_t i = 0; i < small.size(); i += 37) {
    double below = 0, equal = 0;
    for (double x : small) {
      below += x < small[i];
      equal += x == small[i];
    }
    EXPECT_DOUBLE_EQ(ranks[i], 1 + below + (equal - 1) / 2) << i;
  }
}

TEST(RadixSort, SmallIntegersTakeTheCountingPathWithTheSameResult) {
  std::mt19937_64 rng(11);
  std::vector<double> words(6000);
  for (auto& w : words) w = static_cast<double>(rng() % 300);  // word counts: many ties
  auto order = sorted_order(words);
  for (size_t i = 1; i < order.size(); ++i) {
    ASSERT_LE(words[order[i - 1].index], words[order[i].index]);
    if (words[order[i - 1].index] == words[order[i].index]) {
      ASSERT_LT(order[i - 1].index, order[i].index);
    }
  }
  std::vector<double> ranks = average_ranks(words);
  for (size_t i = 0; i < words.size(); i += 97) {
    double below = 0, equal = 0;
    for (double x : words) {
      below += x < words[i];
      equal += x == words[i];
    }
    EXPECT_DOUBLE_EQ(ranks[i], 1 + below + (equal - 1) / 2) << i;
  }
}

}  // namespace
}  // namespace rldk::stats
