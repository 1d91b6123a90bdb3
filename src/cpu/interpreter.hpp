// The CPU backend: runs a plan step by step, each step block by block on
// every core (see steps.hpp), in host memory.
#pragma once

#include "plan/backend.hpp"

namespace nf::cpu {

// Its run evaluates every root of the plan and writes root i into
// outputs[i]. Values the plan keeps in memory are rounded to their dtype, as
// a GPU stores them (f64 emulation keeps them in double). Its prepare
// records the kernels a GPU would load in the kernel manifest, when one is
// being written (NF_KERNEL_MANIFEST), so that `numfuse warmup` can compile
// them without a GPU.
const Backend& backend();

}  // namespace nf::cpu
