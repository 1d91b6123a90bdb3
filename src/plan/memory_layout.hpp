// Where each in-memory value of a schedule lies: dtype, shape, strides and
// offset into its buffer. Kernels are generated for these layouts and the
// launcher passes their strides.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf {

struct Layout {
  DType dtype = f32;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;  // elements from the start of the buffer
  bool contiguous() const;
  // Whether some element lies 2^31 or more elements from the buffer's start,
  // past what a kernel's 32-bit offsets reach.
  bool beyond_int32() const;
};

// Layout::beyond_int32 of a view given by its parts: a statement's key asks
// it of arrays, whose shapes and strides it need not copy into a Layout.
bool beyond_int32(const Shape& shape, const Strides& strides, std::int64_t offset);

// Leaves lie in their arrays, roots in `outputs`, other step outputs in new
// contiguous buffers, and aliases are views of their input's layout.
std::vector<std::optional<Layout>> memory_layouts(const Program& p, const Schedule& s,
                                                  const std::vector<Array>& outputs);

// Whether a kernel of `s` would write an output where it reads another
// element, so that the statement must be computed into new buffers first
// (A += A.T()). A thread reading and writing the same element (A = f(A)) is
// safe; with several steps a later one could read what an earlier one wrote.
bool writes_where_it_reads_elsewhere(const Program& p, const Schedule& s,
                                     std::span<const Array> outputs);

// An array of `dtype` and `shape` with no memory behind it: where a planned
// statement's results would go, for planning and code generation without a
// run (nf::plan, the kernel manifest, the numfuse tool).
Array planned_array(DType dtype, const Shape& shape);

}  // namespace nf
