// Internal helpers on shapes and strides shared by every layer.
#pragma once

#include <vector>

#include "numfuse/shape.hpp"

namespace nf {

Strides contiguous_strides(const Shape& shape);
// Normalises a possibly negative axis; throws ShapeError naming `op`.
int normalize_axis(int axis, int ndim, const char* op);
// Sorted, unique, non-negative axes; Axes{} means all axes.
std::vector<int> normalize_axes(const Axes& axes, int ndim, const char* op);
// Strides that read an array of shape `from` (with `strides`) broadcast to
// shape `to` (right-aligned, numpy rules already checked).
Strides broadcast_strides(const Shape& from, const Strides& strides, const Shape& to);

}  // namespace nf
