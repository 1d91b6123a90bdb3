// Node factories: the only way nodes are made. Each checks its inputs (shapes
// broadcast, dtypes accepted) and throws at the line the user wrote, so every
// node in a DAG is well-formed.
#pragma once

#include <vector>

#include "graph/node.hpp"
#include "numfuse/ops.hpp"

namespace nf {

NodePtr make_leaf(const Array& a);
// Weak constants from C++ scalars: f64, i64 or bool dtype, shape ().
NodePtr make_weak_float(double v);
NodePtr make_weak_int(std::int64_t v);
NodePtr make_weak_bool(bool v);
// A strong 0-d constant of dtype t.
NodePtr make_constant(double v, DType t);
// The index along `axis` at every position of `shape`.
NodePtr make_iota(const Shape& shape, int axis, DType t);
NodePtr make_random(OpId op, const Shape& shape, DType t, std::uint64_t seed, std::uint64_t stream);
NodePtr make_cast(const NodePtr& x, DType t);
NodePtr make_elementwise(OpId op, NodeInputs inputs);
NodePtr make_reduction(OpId op, const NodePtr& x, const Axes& axes, int ddof = 0);
NodePtr make_reshape(const NodePtr& x, Shape shape);
NodePtr make_permute(const NodePtr& x, std::vector<int> perm);
NodePtr make_broadcast(const NodePtr& x, const Shape& shape);
// `precision`: how an f32 product computes on a GPU (held in the node's precision).
NodePtr make_matmul(const NodePtr& a, const NodePtr& b, MatmulPrecision precision);
// numpy's take of `a` at integer `indices` along `axis` (normalised, of a's
// rank): its value at c is a's with the coordinate along axis replaced by
// indices' value at c's dims axis .. axis + indices.ndim - 1.
NodePtr make_take(const NodePtr& a, const NodePtr& indices, int axis, TakeMode mode);

// A copy of `n` over new inputs of the same shapes and dtypes.
NodePtr rebuild(const Node& n, NodeInputs inputs);

}  // namespace nf
