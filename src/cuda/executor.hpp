// The CUDA backend: runs a schedule's fused steps as generated kernels on
// one device's stream.
#pragma once

#include <memory>
#include <vector>

#include "numfuse/array.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf::cuda {

// Whether every step of `s` has a GPU kernel yet (fused and reduction steps
// do; matrix products run on the host until theirs exist).
bool runs_on_gpu(const Schedule& s);

// Everything about a schedule's launches that does not change between runs
// of statements with the same key: loaded kernels, their parameter lists,
// extents, strides and grids. Made once, then a run only binds buffers and
// scalars.
struct Launches;
std::shared_ptr<const Launches> prepare(const Program& p, const Schedule& s,
                                        const std::vector<Array>& outputs, int device);

// Writes root i of `p` into outputs[i]; every array involved lives on
// `device`. `l` was prepared for a statement with the same key.
void run(const Launches& l, const Program& p, const Schedule& s, const std::vector<Array>& outputs,
         int device);

}  // namespace nf::cuda
