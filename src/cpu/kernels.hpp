// The CPU backend's operations on values, one file each. The block
// evaluator calls them on a block's values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/tiling.hpp"
#include "cpu/value.hpp"
#include "graph/op_table.hpp"

namespace nf::cpu {

// An elementwise op of the op table over inputs broadcast to `shape`; into
// `into` (of that shape and out_ctype) where given, else a new value.
Value elementwise(OpId op, const Shape& shape, DType out_ctype, const std::vector<Value>& ins,
                  const Value* into = nullptr);

// A reduction, term by term (ops.def's passes): each term's accumulators,
// one per output, are the monoids the kernels accumulate through
// (jit/runtime/nf_reduce.h), in the same types. The reduced elements are
// taken part by part, and the parts of several tasks combine in a fixed
// order, so results do not depend on the thread count.
struct Partials {
  TermKind term;
  DType ctype;                  // the elements' compute type
  std::int64_t outputs;         // accumulators, in C order of the outputs
  std::vector<std::byte> accs;  // their bytes
};

Partials start_term(TermKind term, DType ctype, std::int64_t outputs);
// Takes in's elements along `axes` into the accumulators of its outputs (in's
// shape with `axes` of length 1). The reduced elements of each output are
// first_index, first_index + 1, ... of the whole reduced extent, in C order.
// A deviation's `centres` (contiguous, of in's compute type, one per output)
// are the values it deviates from.
void accumulate(Partials& p, const Value& in, const std::vector<int>& axes,
                std::int64_t first_index, const Value* centres = nullptr);
// Takes `later`'s accumulators (of the elements after into's) into `into`.
void combine(Partials& into, const Partials& later);
// The centres the term after `first` deviates from (ops.def's NF_TERM
// centre), over all n elements, contiguous in C order of `out_shape`.
Value centres(const Partials& first, TermKind next, std::int64_t n, const Shape& out_shape);
// Reduction op's results from its terms' accumulators over all n elements.
Value finish(OpId op, const std::vector<Partials>& terms, std::int64_t n, std::int64_t ddof,
             const Shape& out_shape, DType out_ctype);
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
