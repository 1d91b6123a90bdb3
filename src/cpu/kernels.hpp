// The CPU interpreter's operations on values, one file each.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/value.hpp"
#include "graph/op_table.hpp"

namespace nf::cpu {

// An elementwise op of the op table over inputs broadcast to `shape`.
Value elementwise(OpId op, const Shape& shape, DType out_ctype, const std::vector<Value>& ins);
// A reduction over sorted `axes`, keeping them with length 1.
Value reduce(OpId op, const Value& in, const std::vector<int>& axes, std::int64_t ddof,
             DType out_ctype);
// (..., M, K) @ (..., K, N) with broadcast batch axes.
Value matmul(const Value& a, const Value& b, const Shape& out_shape);
Value random(OpId op, const Shape& shape, DType dtype, std::uint64_t seed, std::uint64_t stream);
Value iota(const Shape& shape, int axis, DType dtype);

}  // namespace nf::cpu
