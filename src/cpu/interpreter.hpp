// The CPU backend: runs a plan step by step, each step block by block on
// every core (see steps.hpp).
#pragma once

#include <vector>

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf::cpu {

// Evaluates every root of the plan and writes root i into outputs[i] (same
// shape and dtype). Values the plan keeps in memory are rounded to their
// dtype, as a GPU stores them (f64 emulation keeps them in double). An
// output may alias any input: where a step would write elements that
// another reads, the roots are computed into new buffers first.
void run(const Program& p, const Schedule& plan, const std::vector<Array>& outputs);

}  // namespace nf::cpu
