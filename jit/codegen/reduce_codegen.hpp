// A reduction step of a plan -> readable CUDA source for one kernel: each
// output's elements are loaded once (into registers where they fit), reduced
// by the threads that share the output, and the consumers that broadcast the
// results back over the domain are computed and written in the same pass.
#pragma once

#include <vector>

#include "codegen/generated_kernel.hpp"
#include "codegen/reduce_spec.hpp"

namespace nf::jit {

// The kernels of a reduction step, in launch order: one, or one per pass and
// one for the stores where rows are split across blocks.
// Everything but the source: cheap enough for every launch.
std::vector<GeneratedKernel> describe_reduce(const ReduceSpec& spec);
// The kernels with their source, for compilation and inspection.
std::vector<GeneratedKernel> generate_reduce(const ReduceSpec& spec);

}  // namespace nf::jit
