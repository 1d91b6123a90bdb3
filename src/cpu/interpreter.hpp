// The CPU backend: runs a program node by node.
#pragma once

#include <vector>

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf::cpu {

// Evaluates every root of the plan and writes root i into outputs[i] (same
// shape and dtype). Values the plan keeps in memory are rounded to their
// dtype, as a GPU stores them. All roots are computed before the first write,
// so an output may alias any input.
void run(const Program& p, const Schedule& plan, const std::vector<Array>& outputs);

}  // namespace nf::cpu
