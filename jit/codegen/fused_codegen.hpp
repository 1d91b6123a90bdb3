// A fused elementwise step of a plan -> readable CUDA source for one kernel.
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "plan/schedule.hpp"

namespace nf::jit {

class FusedWalk;

// How a kernel reaches an array: element i of the domain (flat), one element
// for every i (scalar), through strides over the domain's coordinates
// (strided); or, where a walk takes vectors along the last of the domain's
// collapsed dims (FusedSpec::walk_dims), with unit stride along that dim (a
// vector load, contiguous) or stride 0 (one value for the vector, broadcast).
// A view read through a shared-memory tile (permuted tiles) is tiled.
enum class Access : std::uint8_t { flat, scalar, strided, contiguous, broadcast, tiled };

struct OperandSpec {
  DType dtype;
  Access access;
};

struct FusedSpec {
  const Program* program = nullptr;
  const Schedule* plan = nullptr;
  const Step* step = nullptr;
  std::vector<OperandSpec> reads;   // one per step->reads
  std::vector<OperandSpec> writes;  // one per step->writes
  bool index64 = false;             // 64-bit indices (a domain or offsets past 2^31)
  // Elements per thread and load on the flat path: the widest vector every
  // flat array allows until a walk takes the step, then the walk's.
  int vector_width = 1;
  int unroll = 1;  // vector groups each thread loads before computing
  // The domain with adjacent dims merged wherever every strided read steps
  // through them as through one, dims of 1 dropped, and each read's strides
  // over it (none for flat and scalar reads): the dims a walk that takes
  // vectors along the last one computes coordinates of. Empty where an array
  // is written through strides or none is read through them.
  Shape walk_dims;
  std::vector<Strides> walk_strides;
  // Elements per vector along walk_dims' last dim: 16 bytes of the widest
  // array loaded a vector at a time where the dim, the offsets and the
  // strides allow, else 1.
  int walk_vector_width = 1;
  // Whether those vectors may cross the last dim's end (a dim that is not a
  // multiple of the width, or a view not on a vector boundary): vectors of
  // the flat arrays alone, the views read an element at a time, and the
  // elements past the last whole vector one at a time.
  bool walk_wraps = false;
  // A collapsed dim other than the last along which a view is contiguous
  // while it steps otherwise along the last (a transposed or permuted
  // view): where tiles of that dim and the last are staged through shared
  // memory; -1 where there is none.
  int tile_dim = -1;
  int tile_edge = 0;    // a tile's elements along tile_dim (fused_spec.hpp)
  int tile_length = 0;  // and along the last dim
  // Whether the tiles move pairs of 2-byte elements, 4 bytes an access
  // (fused_spec.cpp says where).
  bool tile_pairs = false;
  // Whether blocks take the rows of a panel of the last dim one after
  // another, rather than the domain in order: where a view broadcast along
  // the other dims (a row operand) would fall out of L2 between its rows
  // (fused_walks/broadcast_vectors.cpp says where).
  bool panels = false;
  bool collapsed = false;  // whether the walk took walk_dims
  // The walk that emits the kernel (fused_walks/); vector_width and unroll
  // are its launch shape, and what its kernel's signature names.
  const FusedWalk* walk = nullptr;
};

// Everything but the source: cheap enough for every launch.
GeneratedKernel describe_fused(const FusedSpec& spec);
// The kernel with its source, for compilation and inspection.
GeneratedKernel generate_fused(const FusedSpec& spec);

}  // namespace nf::jit
