// Running a statement: plan the roots together and hand the program to the
// backend of the device the outputs live on.
#pragma once

#include <vector>

#include "graph/node.hpp"
#include "numfuse/array.hpp"

namespace nf {

// Writes roots[i] into outputs[i], which has the root's shape and dtype.
void execute(const std::vector<NodePtr>& roots, const std::vector<Array>& outputs);

// A new contiguous array on the default device.
Array new_array(DType dtype, const Shape& shape);

}  // namespace nf
