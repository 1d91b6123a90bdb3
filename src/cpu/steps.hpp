// The CPU backend's evaluators, one per kind of step. Each runs its step
// block by block on every core; its temporaries are a block's size.
#pragma once

#include <vector>

#include "cpu/block_evaluator.hpp"
#include "plan/schedule.hpp"

namespace nf::cpu {

// A node a step writes, and the array it goes to.
struct Write {
  int node;
  Array target;
};

// Evaluates over blocks of `domain` the nodes that `writes` need, computing
// those marked in `computed` (and any other not in memory) and reading the
// rest from `mem`, and writes each block of every write (all of the
// domain's shape) to its target, rounded to the target's dtype.
void run_fused(const Program& p, const std::vector<bool>& computed,
               const std::vector<Write>& writes, const Shape& domain, const Memory& mem);

// A reduction step: its reductions, their producers, and the consumers that
// broadcast them back.
void run_reduction(const Program& p, const Step& s, const std::vector<Write>& writes,
                   const Memory& mem);

// A product and its epilogue, written to `out`.
void run_gemm(const Program& p, const Step& s, const Write& out, const Memory& mem);

// A take: the array's elements at its indices, written to `out`.
void run_gather(const Program& p, const Step& s, const Write& out, const Memory& mem);

// The nodes a step computes, as a mask over the program.
std::vector<bool> computed_by(const Program& p, const Step& s);

}  // namespace nf::cpu
