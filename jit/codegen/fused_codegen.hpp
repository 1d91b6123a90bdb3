// A fused elementwise step of a plan -> readable CUDA source for one kernel.
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "plan/schedule.hpp"

namespace nf::jit {

class FusedWalk;

// How a kernel reaches an array: element i of the domain (flat), one element
// for every i (scalar), or through strides over the domain's coordinates.
enum class Access : std::uint8_t { flat, scalar, strided };

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
  // The walk that emits the kernel (fused_walks/); vector_width and unroll
  // are its launch shape, and what its kernel's signature names.
  const FusedWalk* walk = nullptr;
};

// Everything but the source: cheap enough for every launch.
GeneratedKernel describe_fused(const FusedSpec& spec);
// The kernel with its source, for compilation and inspection.
GeneratedKernel generate_fused(const FusedSpec& spec);

}  // namespace nf::jit
