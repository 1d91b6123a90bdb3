// Reductions over the innermost axis and over others apart from it, cut in
// two: sum(x, (0, 2)) of (A, B, C) becomes sum(sum(x, 2), 0).
#pragma once

#include "graph/node.hpp"

namespace nf {

struct ReductionCut {
  NodePtr root;   // stands for the reduction: its shape and dtype; nullptr: left whole
  NodePtr first;  // the reduction over the innermost run, under root
};

// The reduction `n` as two, first over the run of reduced axes that ends at
// the innermost one, then over the rest, where that reads x faster: x is
// large and in C order, the run is long, and a kept axis lies between the
// two sets.
ReductionCut cut_reduction(const Node& n);

}  // namespace nf
