// Internal helpers on shapes and strides shared by every layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"

namespace nf {

// Every shape that enters numfuse (creation, views, node factories) is sized
// by these two, so nothing downstream multiplies a size unchecked.
//
// The element count of `shape`. Throws ShapeError naming `op` (may be null)
// and the shape for a negative dimension or a count past int64.
std::int64_t checked_numel(const Shape& shape, const char* op);
// The bytes of an array of `shape` and dtype `t`. Throws what checked_numel
// throws, and OutOfMemory naming the bytes asked where they pass
// kMaxArrayBytes: byte offsets into an array must fit a signed 64-bit
// integer on every device. What one device can hold is its allocator's check.
std::size_t checked_bytes(const Shape& shape, DType t, const char* op);
inline constexpr std::uint64_t kMaxArrayBytes = INT64_MAX;

Strides contiguous_strides(const Shape& shape);
// Normalises a possibly negative axis; throws ShapeError naming `op`.
int normalize_axis(int axis, int ndim, const char* op);
// Sorted, unique, non-negative axes; Axes{} means all axes.
std::vector<int> normalize_axes(const Axes& axes, int ndim, const char* op);
// Strides that read an array of shape `from` (with `strides`) broadcast to
// shape `to` (right-aligned, numpy rules already checked).
Strides broadcast_strides(const Shape& from, const Strides& strides, const Shape& to);

// How BLAS reads a row-major matrix of rows x cols with strides (rs, cs)
// where it lies: by rows (a unit column stride; `ld` is rs), or as its
// transpose stored by columns (a unit row stride; `ld` is cs). None where
// neither stride is 1.
struct MatrixStorage {
  bool by_rows;
  std::int64_t ld;
};
std::optional<MatrixStorage> matrix_storage(std::int64_t rows, std::int64_t cols, std::int64_t rs,
                                            std::int64_t cs);

}  // namespace nf
