// How a gather step (numpy's take) reaches its operands over its domain, the
// take's shape: the CPU backend's loop and the generated kernel both walk
// the domain's coordinates through this one map.
#pragma once

#include <cstdint>

#include "graph/node.hpp"
#include "numfuse/shape.hpp"

namespace nf {

struct GatherMap {
  // The array's strides over the domain's dims, 0 along the indices' dims:
  // the element read at coordinates c lies at sum(c[d] * array[d]) plus the
  // index read there times axis_stride.
  Strides array;
  // The indices' strides over the domain's dims (broadcast), 0 elsewhere.
  Strides indices;
  std::int64_t axis_stride = 0;  // the array's stride along the axis taken
  std::int64_t extent = 0;       // the array's length along it
};

// The map of take node `t` reading an array of strides `array_strides` (of
// t's first input's shape) and indices of strides `index_strides` (of its
// second's).
GatherMap gather_map(const Node& t, const Strides& array_strides, const Strides& index_strides);

}  // namespace nf
