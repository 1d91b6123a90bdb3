// The CUDA backend: runs a schedule's fused steps as generated kernels on
// one device's stream.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "numfuse/array.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf::cuda {

// Everything about a schedule's launches that does not change between runs
// of statements with the same key: loaded kernels, their parameter lists,
// extents, strides and grids, and the cuBLASLt plans of its products. Made
// once, then a run only binds buffers and scalars. Null where a product has
// no GPU plan (cuda/blas.hpp says which): such a statement runs on the host.
struct Launches;
std::shared_ptr<const Launches> prepare(const Program& p, const Schedule& s,
                                        std::span<const Array> outputs, int device);

// Writes root i of `p` into outputs[i]; every array involved lives on
// `device`. `l` was prepared for a statement with the same key.
void run(const Launches& l, const Program& p, const Schedule& s, std::span<const Array> outputs,
         int device);

// For benchmarks on a machine without a GPU: with stand-ins on, prepare()
// loads no kernel and run() binds every argument but launches nothing, so
// that a warm statement over arrays that claim a device (with host memory
// behind them) runs the rest of its host path (bench/host_overhead_bench).
// Elementwise statements only: planning a reduction asks the device's
// architecture.
void use_stand_in_kernels(bool on);

}  // namespace nf::cuda
