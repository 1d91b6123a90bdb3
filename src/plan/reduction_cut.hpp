// Reductions over the innermost axis and over others apart from it, cut in
// two: sum(x, (0, 2)) of (A, B, C) becomes sum(sum(x, 2), 0).
#pragma once

#include <span>
#include <unordered_set>

#include "graph/node.hpp"

namespace nf {

struct ReductionCut {
  NodePtr root;   // stands for the reduction: its shape and dtype; nullptr: left whole
  NodePtr first;  // the reduction over the innermost run, under root
};

// The reductions a statement broadcasts back into a larger elementwise node,
// as in x - mean(x, (0, 2)): there one kernel reads x once for both, which
// three cannot match. Searched for when first asked.
class BroadcastBack {
 public:
  explicit BroadcastBack(std::span<const NodePtr> roots) : roots_(roots) {}
  bool contains(const Node& reduction);

 private:
  void search();

  std::span<const NodePtr> roots_;
  bool searched_ = false;
  bool everything_ = false;  // the statement was too large to search
  std::unordered_set<const Node*> read_back_;
};

// The reduction `n` as two, first over the run of reduced axes that ends at
// the innermost one, then over the rest, where that reads x faster: x is
// large, of 2- or 4-byte floats and in C order, the run is long, a kept axis
// lies between the two sets, and the statement does not broadcast n back
// (or does, but one kernel could not read its rows in vectors either: halves
// in runs of odd length).
ReductionCut cut_reduction(const Node& n, BroadcastBack& broadcast_back);

}  // namespace nf
