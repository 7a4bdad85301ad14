// An open-addressing hash table from n-gram keys (never 0) to dense slot numbers 0, 1, 2, ... in insertion order.
// Linear probing over a power-of-two array kept at most half full: a probe is one cache line almost always, which is
// what bounds exact n-gram screening (methods.md §4.4: 38 M probes/s from DRAM, against 28 M/s for
// std::unordered_set). Nearly every training n-gram is absent from the eval side, so a one-bit-per-key filter, 8
// bits per cell (a few % false positives), answers most probes from a 16x smaller array that stays in cache. Values
// live beside it in plain vectors indexed by slot, so each worker thread can keep its own values over one shared,
// read-only table.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace rldk::contamination {

class NgramTable {
 public:
  static constexpr uint32_t MISSING = 0xFFFFFFFFu;

  explicit NgramTable(size_t expected = 0) { rehash(capacity_for(expected)); }

  // The slot of `key`, inserting it when new.
  uint32_t insert(uint64_t key) {
    if ((size_ + 1) * 2 > cells_.size()) rehash(cells_.size() * 2);
    size_t mask = cells_.size() - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
      if (cells_[i].key == key) return cells_[i].slot;
      if (cells_[i].key == 0) {
        cells_[i] = Cell{key, static_cast<uint32_t>(size_)};
        filter_[filter_bit(key) >> 6] |= uint64_t{1} << (filter_bit(key) & 63);
        return static_cast<uint32_t>(size_++);
      }
    }
  }
  uint32_t find(uint64_t key) const {
    if (!(filter_[filter_bit(key) >> 6] >> (filter_bit(key) & 63) & 1)) return MISSING;
    size_t mask = cells_.size() - 1;
    for (size_t i = key & mask;; i = (i + 1) & mask) {
      if (cells_[i].key == key) return cells_[i].slot;
      if (cells_[i].key == 0) return MISSING;
    }
  }
  size_t size() const { return size_; }
  // Keys in slot order (for writing the table out).
  std::vector<uint64_t> keys_by_slot() const {
    std::vector<uint64_t> out(size_);
    for (const Cell& c : cells_) {
      if (c.key != 0) out[c.slot] = c.key;
    }
    return out;
  }

 private:
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  void rehash(size_t capacity) {
    std::vector<Cell> old = std::move(cells_);
    cells_.assign(capacity, Cell{});
    filter_.assign(capacity * FILTER_BITS_PER_CELL / 64, 0);
    size_t mask = capacity - 1;
    for (const Cell& c : old) {
      if (c.key == 0) continue;
      size_t i = c.key & mask;
      while (cells_[i].key != 0) i = (i + 1) & mask;
      cells_[i] = c;
      filter_[filter_bit(c.key) >> 6] |= uint64_t{1} << (filter_bit(c.key) & 63);
    }
  }

  struct Cell {
    uint64_t key = 0;
    uint32_t slot = 0;
  };
  // The filter's bit of a key: the key rotated so its high half (the slot uses the low bits) comes first.
  size_t filter_bit(uint64_t key) const { return std::rotl(key, 32) & (filter_.size() * 64 - 1); }

  static constexpr size_t FILTER_BITS_PER_CELL = 8;
  std::vector<Cell> cells_;  // key and slot side by side: a probe touches one cache line
  std::vector<uint64_t> filter_;
  size_t size_ = 0;
};

}  // namespace rldk::contamination
