// DAG nodes: immutable once built. Built only by the factories in build.hpp,
// which check shapes and dtypes, so every node that exists is well-formed.
#pragma once

#include <array>
#include <cstddef>
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

// The inputs of a node, held in the node: no op takes more than three
// (where, clip), so a node costs one allocation for itself and its inputs
// rather than two. Readers use it as a vector.
class NodeInputs {
 public:
  static constexpr std::size_t kMax = 3;

  NodeInputs() = default;
  // By value, so that an operand passed as a temporary is moved, not copied.
  NodeInputs(NodePtr a) { push_back(std::move(a)); }
  NodeInputs(NodePtr a, NodePtr b) : NodeInputs(std::move(a)) { push_back(std::move(b)); }
  NodeInputs(NodePtr a, NodePtr b, NodePtr c) : NodeInputs(std::move(a), std::move(b)) {
    push_back(std::move(c));
  }
  NodeInputs(const std::vector<NodePtr>& ins) {
    for (const NodePtr& in : ins) push_back(in);
  }
  NodeInputs(std::vector<NodePtr>&& ins) {
    for (NodePtr& in : ins) push_back(std::move(in));
  }
  NodeInputs(const NodeInputs&) = default;
  NodeInputs& operator=(const NodeInputs&) = default;
  // A moved-from list is empty, as a moved-from vector is.
  NodeInputs(NodeInputs&& o) noexcept : items_(std::move(o.items_)), size_(o.size_) { o.size_ = 0; }
  NodeInputs& operator=(NodeInputs&& o) noexcept {
    items_ = std::move(o.items_);
    size_ = o.size_;
    o.size_ = 0;
    return *this;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  NodePtr& operator[](std::size_t i) { return items_[i]; }
  const NodePtr& operator[](std::size_t i) const { return items_[i]; }
  NodePtr* begin() { return items_.data(); }
  NodePtr* end() { return items_.data() + size_; }
  const NodePtr* begin() const { return items_.data(); }
  const NodePtr* end() const { return items_.data() + size_; }
  NodePtr& back() { return items_[size_ - 1]; }
  const NodePtr& back() const { return items_[size_ - 1]; }

  void push_back(NodePtr in) {
    if (size_ == kMax) too_many();
    items_[size_++] = std::move(in);
  }
  NodePtr& emplace_back(NodePtr in) {
    push_back(std::move(in));
    return back();
  }
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) items_[i].reset();
    size_ = 0;
  }

 private:
  [[noreturn]] static void too_many();

  std::array<NodePtr, kMax> items_;
  std::size_t size_ = 0;
};

struct Node {
  OpId op;
  DType dtype;
  Shape shape;
  // Weak nodes come from C++ scalars and take the dtype of the arrays they
  // meet (NumPy 2 / NEP 50 promotion).
  bool weak = false;
  NodeInputs inputs;

  // Attributes; which ones an op uses is said beside each.
  double fvalue = 0;         // constant (floating)
  std::int64_t ivalue = 0;   // constant (integer, bool); iota axis; var/std ddof; matmul precision
  std::vector<int> axes;     // reduction axes (sorted); permute order
  std::uint64_t seed = 0;    // random
  std::uint64_t stream = 0;  // random: which stream of the seed
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
