// The CUDA backend: runs a schedule's fused steps as generated kernels on
// one device's stream.
#pragma once

#include <vector>

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf::cuda {

// Whether every step of `s` has a GPU kernel yet (fused elementwise steps do;
// reductions and products run on the host until their kernels exist).
bool runs_on_gpu(const Schedule& s);

// Writes root i of `s` into outputs[i]; every array involved lives on `device`.
void run(const Schedule& s, const std::vector<Array>& outputs, int device);

}  // namespace nf::cuda
