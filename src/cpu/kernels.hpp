// The CPU backend's operations on values, one file each. The block
// evaluator calls them on a block's values.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "cpu/tiling.hpp"
#include "cpu/value.hpp"
#include "graph/op_table.hpp"

namespace nf::cpu {

// An elementwise op of the op table over inputs broadcast to `shape`.
Value elementwise(OpId op, const Shape& shape, DType out_ctype, const std::vector<Value>& ins);

// One output's reduction over the reduced elements seen so far. `a` and `b`
// are the double-precision figures (sum, product; mean and M2; maximum and
// sum of exponentials), `v` the value in the input's type (an integer sum or
// product, min, max, the arg-reductions' value), `index` an arg-reduction's.
template <class T>
struct Partial {
  std::int64_t n = 0;
  double a = 0, b = 0;
  T v{};
  std::int64_t index = -1;
  bool flag = false;  // any/all: an element decided it; logsumexp: a NaN
};

// A reduction's states for a set of outputs, in C order.
struct Partials {
  OpId op;
  DType ctype;  // the input's compute type
  std::int64_t ddof;
  std::variant<std::vector<Partial<nf_b8>>, std::vector<Partial<nf_u8>>,
               std::vector<Partial<nf_i32>>, std::vector<Partial<nf_i64>>,
               std::vector<Partial<nf_f32>>, std::vector<Partial<nf_f64>>>
      states;
};

Partials start_reduce(OpId op, DType in_ctype, std::int64_t outputs, std::int64_t ddof);
// Takes in's elements along `axes` into the states of its outputs (in's
// shape with `axes` of length 1). The reduced elements of each output are
// first_index, first_index + 1, ... of the whole reduced extent, in C order.
void accumulate(Partials& p, const Value& in, const std::vector<int>& axes,
                std::int64_t first_index);
// Takes `later`'s states (of the elements after into's) into `into`.
void combine(Partials& into, const Partials& later);
Value finish(const Partials& p, const Shape& out_shape, DType out_ctype);
// A whole reduction over sorted `axes`, keeping them with length 1.
Value reduce(OpId op, const Value& in, const std::vector<int>& axes, std::int64_t ddof,
             DType out_ctype);

// (..., M, K) @ (..., K, N) with broadcast batch axes into `out`, a
// contiguous value of the product's shape.
void matmul(const Value& a, const Value& b, const Value& out);

// Box b of a random array of shape `shape`: elements by their linear index in
// `shape`, so any block gives what the whole array holds there.
Value random(OpId op, const Shape& shape, const Box& b, DType dtype, std::uint64_t seed,
             std::uint64_t stream);
// Box b of an index ramp along `axis`.
Value iota(const Box& b, int axis, DType dtype);

}  // namespace nf::cpu
