// A statement ready to run: the DAG below its roots with equal subtrees merged
// (common-subexpression elimination), in an order where inputs come first.
#pragma once

#include <span>
#include <vector>

#include "graph/node.hpp"

namespace nf {

struct Program {
  std::vector<NodePtr> nodes;            // topological order, each subtree once
  std::vector<std::vector<int>> inputs;  // per node: indices of its inputs
  std::vector<int> roots;                // per root: its node's index
  std::vector<int> last_use;             // per node: last reader's index; nodes.size() for roots
};

Program make_program(std::span<const NodePtr> roots);
// For braced lists of roots (`make_program({e.node()})`), which no span takes.
inline Program make_program(const std::vector<NodePtr>& roots) {
  return make_program(std::span<const NodePtr>(roots));
}

}  // namespace nf
