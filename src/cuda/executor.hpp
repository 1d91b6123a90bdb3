// The CUDA backend: runs a schedule's fused steps as generated kernels on
// one device's stream.
#pragma once

#include "plan/backend.hpp"

namespace nf::cuda {

// Its prepare loads a plan's kernels (generated and compiled on first use)
// and plans its products with cuBLASLt, and is null where a product has no
// GPU plan (cuda/blas.hpp says which): such a statement runs on the host.
// Its run binds each statement's buffers and scalars and launches on the
// device's stream, where all the outputs live.
const Backend& backend();

// For benchmarks on a machine without a GPU: with stand-ins on, prepare()
// loads no kernel and run() binds every argument but launches nothing, so
// that a warm statement over arrays that claim a device (with host memory
// behind them) runs the rest of its host path (bench/host_overhead_bench).
// Elementwise statements only: planning a reduction asks the device's
// architecture.
void use_stand_in_kernels(bool on);

}  // namespace nf::cuda
