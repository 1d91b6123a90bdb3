// A small open-addressing hash index from 64-bit keys to ints, for the
// planner's walks over a statement's DAG. They run for every statement, where
// std::unordered_map's node allocations would cost more than the walk itself.
#pragma once

#include <cstdint>
#include <vector>

namespace nf {

class FlatIndex {
 public:
  explicit FlatIndex(std::size_t expected = 16) {
    std::size_t cap = 16;
    while (cap < 2 * expected) cap *= 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }

  // Keys may repeat: every value stored under `key` is offered to `match`
  // until it returns true. Returns the matching value, or -1.
  template <class Match>
  int find(std::uint64_t key, Match&& match) const {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value < 0) return -1;
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
    int value = -1;  // -1: empty
  };

  std::size_t home(std::uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return std::size_t(key) & mask_;
  }
  void place(std::uint64_t key, int value) {
    std::size_t i = home(key);
    while (slots_[i].value >= 0) i = (i + 1) & mask_;
    slots_[i] = {key, value};
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.value >= 0) place(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;  // slots_.size() - 1, a power of two less one
  std::size_t size_ = 0;
};

}  // namespace nf
