#include "codegen/fast_division.hpp"

#include <algorithm>

#include "numfuse/errors.hpp"

namespace nf::jit {

FastDivisor fast_divisor(std::int64_t d, bool index64) {
  if (d < 1) throw InternalError("fast_divisor: the divisor " + std::to_string(d) + " is below 1");
  int s = 0;
  while ((std::uint64_t(1) << s) < std::uint64_t(d)) ++s;
  // m = floor(2^N (2^s - d) / d) + 1, N the index's bits; below 2^N as
  // 2^s - d < d.
  const unsigned __int128 excess = (unsigned __int128)((std::uint64_t(1) << s) - std::uint64_t(d));
  const int bits = index64 ? 64 : 32;
  const auto m = std::uint64_t((excess << bits) / std::uint64_t(d) + 1);
  return {m, s};
}

std::int64_t fast_divide(std::int64_t x, const FastDivisor& f, bool index64) {
  const auto ux = std::uint64_t(x);
  const std::uint64_t high =
      index64 ? std::uint64_t((unsigned __int128)ux * f.magic >> 64) : (ux * f.magic) >> 32;
  return std::int64_t((high + ux) >> f.shift);
}

Strides walk_dims_values(const Shape& dims, bool index64) {
  const std::size_t r = dims.size();
  Strides v(3 * r);
  for (std::size_t k = 0; k < r; ++k) {
    // Over a dim of length 0 there is no index to divide: any divisor does.
    const FastDivisor f = fast_divisor(std::max<std::int64_t>(dims[k], 1), index64);
    v[k] = dims[k];
    // 32-bit multipliers pass as the int with their bits.
    v[r + k] = index64 ? std::int64_t(f.magic) : std::int64_t(std::int32_t(std::uint32_t(f.magic)));
    v[2 * r + k] = f.shift;
  }
  return v;
}

}  // namespace nf::jit
