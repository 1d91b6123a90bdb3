// DAG nodes: immutable once built. Built only by the factories in build.hpp,
// which check shapes and dtypes, so every node that exists is well-formed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "graph/op_table.hpp"
#include "numfuse/array.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"

namespace nf {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  OpId op;
  DType dtype;
  Shape shape;
  // Weak nodes come from C++ scalars and take the dtype of the arrays they
  // meet (NumPy 2 / NEP 50 promotion).
  bool weak = false;
  std::vector<NodePtr> inputs;

  // Attributes; which ones an op uses is said beside each.
  double fvalue = 0;                   // constant (floating)
  std::int64_t ivalue = 0;             // constant (integer, bool); iota axis; var/std ddof
  std::vector<int> axes;               // reduction axes (sorted); permute order
  std::uint64_t seed = 0;              // random
  std::uint64_t stream = 0;            // random: which stream of the seed
  std::shared_ptr<const Array> array;  // leaf: the view it reads
  // The device of the arrays below this node, if any: a statement runs there.
  std::optional<Device> device;

  std::uint64_t hash = 0;   // structural; equal hashes mean equal subtrees (CSE)
  std::uint32_t depth = 0;  // longest path to a node without inputs

  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  // Declared because the destructor is: without them a moved Node would be
  // copied, vectors and inputs and all.
  Node(Node&&) = default;
  Node& operator=(Node&&) = default;
  // Tears long chains down iteratively: an expression grown in a loop may be
  // deeper than the stack.
  ~Node();
};

}  // namespace nf
