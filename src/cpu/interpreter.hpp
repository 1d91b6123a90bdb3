// The CPU backend: runs a program node by node.
#pragma once

#include <vector>

#include "numfuse/array.hpp"
#include "plan/program.hpp"

namespace nf::cpu {

// Evaluates every root of `p` and writes root i into outputs[i] (same shape
// and dtype). All roots are computed before the first write, so an output may
// alias any input.
void run(const Program& p, const std::vector<Array>& outputs);

}  // namespace nf::cpu
