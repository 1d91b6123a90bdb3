// Moving data between stored dtypes and compute types.
#pragma once

#include "cpu/value.hpp"
#include "graph/node.hpp"
#include "numfuse/array.hpp"

namespace nf::cpu {

// Reads an array into a new contiguous value of its compute type.
Value load(const Array& a);
// An array in its compute type: the array itself, through its strides, where
// it holds that type, else load(a).
Value view_or_load(const Array& a);
// Writes `v` (already of dst's shape) into dst's storage, rounding to its dtype.
void store(const Value& v, const Array& dst);
// numpy's astype: converts to `to`'s compute type, rounding through `to`.
Value cast(const Value& v, DType to);
// A 0-d value holding a constant of dtype t.
Value constant(const ConstantValue& v, DType t);

}  // namespace nf::cpu
