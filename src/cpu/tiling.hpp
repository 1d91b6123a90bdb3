// Blocks of an iteration domain. The CPU backend evaluates a step block by
// block, so that its temporaries are a block's size, not the array's, and the
// blocks go to different threads.
#pragma once

#include <cstdint>
#include <vector>

#include "numfuse/shape.hpp"

namespace nf::cpu {

// Elements per block: small enough that a block's temporaries for a chain of
// ops stay in a core's L2 cache, large enough that the per-block cost of
// dispatching each op is small beside the work.
inline constexpr std::int64_t kBlockElements = 16384;

// The elements [lo[d], hi[d]) on each axis d.
struct Box {
  std::vector<std::int64_t> lo, hi;
  Shape shape() const;
};

// Box b of a domain as seen by a value of shape s that broadcasts to the
// domain: s's axes align with the domain's last ones, and s's axes of length
// 1 take element 0.
Box project(const Box& b, const Shape& s);

// A shape cut into blocks of about `target` elements, each a consecutive
// range of its C-order indices, numbered in that order: the inner axes whole,
// one axis cut into chunks, the outer axes one index at a time.
class Tiling {
 public:
  Tiling(const Shape& shape, std::int64_t target);
  std::int64_t size() const { return count_; }
  Box box(std::int64_t i) const;

 private:
  Shape shape_;
  int axis_ = -1;  // the axis cut into chunks; -1: one box, the whole shape
  std::int64_t chunk_ = 1, chunks_ = 1, count_ = 0;
};

}  // namespace nf::cpu
