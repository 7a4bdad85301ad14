#include "stats/radix_sort.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rldk::stats {
namespace {

constexpr int BITS = 11, PASSES = 6;  // 66 bits cover a 64-bit key
constexpr size_t BUCKETS = size_t{1} << BITS;
constexpr size_t SMALL = 512;         // below this, std::sort wins

uint64_t key_of(uint64_t k) { return k; }
uint64_t key_of(const KeyedIndex& k) { return k.key; }

// Stable LSD passes; a pass whose digit is the same for every key (the low mantissa bits of integer-valued data
// such as lengths) is skipped.
template <class T>
void radix_sort(std::vector<T>& items) {
  std::vector<size_t> counts(PASSES * BUCKETS, 0);
  for (const T& item : items) {
    uint64_t key = key_of(item);
    for (int p = 0; p < PASSES; ++p) ++counts[p * BUCKETS + ((key >> (p * BITS)) & (BUCKETS - 1))];
  }
  std::vector<T> other(items.size());
  for (int p = 0; p < PASSES; ++p) {
    size_t* count = counts.data() + p * BUCKETS;
    if (std::any_of(count, count + BUCKETS, [&](size_t c) { return c == items.size(); })) continue;
    size_t offset = 0;
    for (size_t b = 0; b < BUCKETS; ++b) {
      size_t c = count[b];
      count[b] = offset;
      offset += c;
    }
    for (const T& item : items) other[count[(key_of(item) >> (p * BITS)) & (BUCKETS - 1)]++] = item;
    items.swap(other);
  }
}

double value_of(uint64_t key) {
  uint64_t bits = (key >> 63) != 0 ? key & ~(uint64_t{1} << 63) : ~key;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

uint64_t order_key(double v) {
  if (v == 0) v = 0.0;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

void sort_values(std::span<double> values) {
  if (values.size() < SMALL) {
    std::sort(values.begin(), values.end());
    return;
  }
  std::vector<uint64_t> keys(values.size());
  for (size_t i = 0; i < values.size(); ++i) keys[i] = order_key(values[i]);
  radix_sort(keys);
  for (size_t i = 0; i < values.size(); ++i) values[i] = value_of(keys[i]);
}

// Small non-negative integers (word counts, token lengths) in one counting pass instead of radix passes.
static bool counting_order(std::span<const double> values, std::vector<KeyedIndex>& order) {
  double hi = 0;
  for (double v : values) {
    if (!(v >= 0) || v != std::floor(v) || v > 4.0 * static_cast<double>(values.size()) + 1024) return false;
    hi = std::max(hi, v);
  }
  std::vector<size_t> start(static_cast<size_t>(hi) + 2, 0);
  for (double v : values) ++start[static_cast<size_t>(v) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  order.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) order[start[static_cast<size_t>(values[i])]++] = {order_key(values[i]), i};
  return true;
}

std::vector<KeyedIndex> sorted_order(std::span<const double> values) {
  std::vector<KeyedIndex> order;
  if (values.size() >= SMALL && counting_order(values, order)) return order;
  order.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) order[i] = {order_key(values[i]), i};
  if (values.size() < SMALL) {
    std::stable_sort(order.begin(), order.end(), [](const KeyedIndex& a, const KeyedIndex& b) { return a.key < b.key; });
  } else {
    radix_sort(order);
  }
  return order;
}

}  // namespace rldk::stats
