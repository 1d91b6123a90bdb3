// A gather step of a plan (numpy's take) -> readable CUDA source for one
// kernel. Where the gathered dims are not the last and the output's rows
// are a warp long or longer, a warp copies each run of a row: a thread finds
// the run's coordinates and reads its index once, then copies its units
// (elements, or vectors of up to 16 bytes where rows lie contiguous and
// aligned) strided over the lanes. Gathered columns whose rows fit in
// shared memory are staged there by a block a row; shorter rows and other
// columns take a thread a unit.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "plan/gather_map.hpp"
#include "plan/memory_layout.hpp"

namespace nf::jit {

struct GatherSpec {
  const Step* step = nullptr;
  const Node* take = nullptr;
  DType index_dtype = i64;
  // Elements a thread moves with one load and one store: a vector along the
  // last dim, where that dim is not the indices' and every row of the array
  // and of the output starts on a vector's boundary; else 1.
  int vector = 1;
  // Rows (the last dim not gathered) of a warp's units or more: a group of
  // `group` threads (a warp) copies a run of group * per_lane units of a
  // row, each lane per_lane units `group` apart. Otherwise both 1: a thread a
  // unit.
  int group = 1;
  int per_lane = 1;
  // The walk's domain: the take's, its last dim in runs for rows; the
  // array's and the indices' strides over it and the output's, counted in
  // units (a run's stride along the last dim).
  Shape domain;
  GatherMap map;
  Strides out_strides;
  // Rows: the row's length in units, and the array's and the output's
  // strides along it.
  std::int64_t row = 0, row_stride_a = 0, row_stride_out = 0;
  // Columns staged: a block copies each row of the array along the axis
  // taken (a slice a[c0, .., :]) into shared memory, `vector` elements a
  // load, then writes that slice's elements of out from it, so that the
  // random reads hit shared memory rather than 32-byte sectors of L2.
  bool staged = false;
  bool index64 = false;  // 64-bit indices (a domain or offsets past 2^31)
};

GatherSpec make_gather_spec(const Program& p, const Schedule& s, const Step& step,
                            const std::vector<std::optional<Layout>>& layouts,
                            const std::vector<Array>& outputs);

// Everything but the source: cheap enough for every launch.
GeneratedKernel describe_gather(const GatherSpec& spec);
// The kernel with its source, for compilation and inspection.
GeneratedKernel generate_gather(const GatherSpec& spec);

}  // namespace nf::jit
