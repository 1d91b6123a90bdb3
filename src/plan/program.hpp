// A statement ready to run: the DAG below its roots with equal subtrees merged
// (common-subexpression elimination), in an order where inputs come first.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/node.hpp"

namespace nf {

// The program indices of a node's inputs, held inline as the node holds its
// inputs: a program then costs no allocation per node.
class ProgramInputs {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int operator[](std::size_t i) const { return items_[i]; }
  const int* begin() const { return items_.data(); }
  const int* end() const { return items_.data() + size_; }
  // Called once per input of a node, so never more than NodeInputs::kMax times.
  void push_back(int i) { items_[size_++] = i; }
  bool operator==(const ProgramInputs& o) const {
    return std::equal(begin(), end(), o.begin(), o.end());
  }

 private:
  std::array<int, NodeInputs::kMax> items_{};
  std::uint32_t size_ = 0;
};

struct Program {
  std::vector<NodePtr> nodes;         // topological order, each subtree once
  std::vector<ProgramInputs> inputs;  // per node: indices of its inputs
  std::vector<int> roots;             // per root: its node's index
  // The first halves of reductions cut in two (plan/reduction_cut.hpp), for
  // a plan to say why it has them.
  std::vector<int> cut_firsts;
};

// Where a program runs. For a GPU, reductions over the innermost axis and
// others apart from it are cut in two (plan/reduction_cut.hpp): its kernels
// read rows faster than such sets of runs. The CPU backend keeps them whole:
// cut by hand on its walk, halves ran slower (median 1.18x the time) and
// f32 faster (0.81x), still behind numpy either way; its own walk of several
// reduced axes is the change to make there (bench/RESULTS.md, 2026-11-28).
enum class ProgramTarget { host, gpu };

Program make_program(std::span<const NodePtr> roots, ProgramTarget target = ProgramTarget::host);
// For braced lists of roots (`make_program({e.node()})`), which no span takes.
inline Program make_program(const std::vector<NodePtr>& roots,
                            ProgramTarget target = ProgramTarget::host) {
  return make_program(std::span<const NodePtr>(roots), target);
}

}  // namespace nf
