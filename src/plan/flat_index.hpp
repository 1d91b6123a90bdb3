// A small open-addressing hash index from 64-bit keys to ints, for the
// planner's walks over a statement's DAG. They run for every statement, where
// std::unordered_map's node allocations would cost more than the walk itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nf {

class FlatIndex {
 public:
  explicit FlatIndex(std::size_t expected = 16) {
    const std::size_t cap = capacity_for(expected);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }

  // Empties the index and keeps its table for the next use: a slot holds a
  // value only while its stamp is the index's, so emptying touches no slot.
  // A table far larger than this use needed (one huge statement) is given
  // back instead of being kept.
  void clear() {
    if (slots_.size() > 4 * capacity_for(size_)) {
      *this = FlatIndex(size_);
      return;
    }
    size_ = 0;
    if (++stamp_ != 0) return;
    slots_.assign(slots_.size(), Slot{});  // the stamps wrapped around
    stamp_ = 1;
  }

  // Keys may repeat: every value stored under `key` is offered to `match`
  // until it returns true. Returns the matching value, or -1.
  template <class Match>
  int find(std::uint64_t key, Match&& match) const {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.stamp != stamp_) return -1;
      if (s.key == key && match(s.value)) return s.value;
    }
  }
  int find(std::uint64_t key) const {
    return find(key, [](int) { return true; });
  }

  void insert(std::uint64_t key, int value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(key, value);
    ++size_;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    int value = 0;
    std::uint32_t stamp = 0;  // the index's stamp while the slot is full
  };

  static std::size_t capacity_for(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < 2 * expected) cap *= 2;
    return cap;
  }
  std::size_t home(std::uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return std::size_t(key) & mask_;
  }
  void place(std::uint64_t key, int value) {
    std::size_t i = home(key);
    while (slots_[i].stamp == stamp_) i = (i + 1) & mask_;
    slots_[i] = {key, value, stamp_};
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    const std::uint32_t was = stamp_;
    stamp_ = 1;
    for (const Slot& s : old) {
      if (s.stamp == was) place(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;  // slots_.size() - 1, a power of two less one
  std::size_t size_ = 0;
  std::uint32_t stamp_ = 1;
};

}  // namespace nf
