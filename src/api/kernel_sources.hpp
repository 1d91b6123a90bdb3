// The kernels a statement runs on a GPU, generated without one: what
// nf::plan shows, and what the CPU backend records in the kernel manifest.
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf {

// The kernels a GPU of `arch` launches for schedule `s` of `p` writing
// `outputs`, in launch order, as the CUDA executor generates them; steps over
// nothing launch none.
std::vector<jit::GeneratedKernel> generate_kernels(const Program& p, const Schedule& s,
                                                   const std::vector<Array>& outputs,
                                                   const std::string& arch);

// Records those kernels for nf::target_arch() in the kernel manifest.
void record_kernels(const Program& p, const Schedule& s, const std::vector<Array>& outputs);

// An array of `dtype` and `shape` with no memory behind it: where a planned
// statement's results would go.
Array planned_array(DType dtype, const Shape& shape);

}  // namespace nf
