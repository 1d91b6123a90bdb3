// Division by a divisor known at launch as a multiply-high, an add and a
// shift, so that a kernel finds coordinates without a division instruction
// (nf_walk_dims and nf_coordinate in jit/runtime/nf_kernel.h).
#pragma once

#include <cstdint>

#include "numfuse/shape.hpp"

namespace nf::jit {

struct FastDivisor {
  std::uint64_t magic;  // m: below 2^32 for 32-bit indices
  int shift;            // s: ceil(log2 d)
};

// For divisor d >= 1 and indices of 32 or 64 bits: x / d == (mulhi(x, m) + x) >> s
// for every x in [0, 2^31) (or [0, 2^63)).
FastDivisor fast_divisor(std::int64_t d, bool index64);

// x / d as a kernel computes it with fast_divisor(d, index64).
std::int64_t fast_divide(std::int64_t x, const FastDivisor& f, bool index64);

// The values of an nf_walk_dims parameter over `dims`: the dims, their
// multipliers (as the kernel's signed index type holds their bits), their shifts.
Strides walk_dims_values(const Shape& dims, bool index64);

}  // namespace nf::jit
