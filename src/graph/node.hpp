// DAG nodes: immutable once built. Built only by the factories in build.hpp,
// which check shapes and dtypes, so every node that exists is well-formed.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/op_table.hpp"
#include "numfuse/array.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/ops.hpp"
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

// A constant's value: `f` for floating dtypes, `i` for integers and bool
// (the other is 0). Equal when their bits are, so that NaN is one constant
// and -0.0 another than 0.0.
struct ConstantValue {
  double f = 0;
  std::int64_t i = 0;

  bool operator==(const ConstantValue& o) const {
    return std::bit_cast<std::uint64_t>(f) == std::bit_cast<std::uint64_t>(o.f) && i == o.i;
  }
};

struct Node {
  OpId op;
  DType dtype;
  Shape shape;
  // Weak nodes come from C++ scalars and take the dtype of the arrays they
  // meet (NumPy 2 / NEP 50 promotion).
  bool weak = false;
  NodeInputs inputs;

  // Attributes, each used by the ops said beside it and left at its default
  // by every other op. visit_attributes (below) lists them for all that
  // compares, hashes or keys nodes.
  ConstantValue value;  // constant
  // iota: the axis it counts along; take: the axis of `a` it takes along,
  // where the indices' dims lie in its shape
  int axis = 0;
  int ddof = 0;                                      // var, std: delta degrees of freedom
  MatmulPrecision precision = MatmulPrecision::f32;  // matmul of f32
  TakeMode mode = TakeMode::raise;                   // take: what an index out of range does
  std::vector<int> axes;               // reductions: the axes reduced (sorted); permute: the order
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

// Who reads an attribute beyond common subexpressions (hash and equality,
// which read them all).
enum class AttributeUse : std::uint8_t {
  value,  // bound to a kernel parameter at each run: no plan or kernel depends on it
  plan,   // decides the plan and reaches kernels through their specs: in the statement key
  code,   // written into kernel code: in the statement key and in kernel signatures
};

// The attributes of a node, in one list: the hasher (build.cpp), node
// equality (program.cpp), the statement key and the kernel signatures all
// read them here, so that an attribute added to Node is added to this list
// once and each of them sees it as its use says. `visit(use, name, field)`
// gets each member's use as a compile-time constant (Use<...>) and a
// pointer to the member.
template <AttributeUse U>
using Use = std::integral_constant<AttributeUse, U>;

template <class Visit>
void visit_attributes(Visit&& visit) {
  visit(Use<AttributeUse::value>(), "value", &Node::value);
  visit(Use<AttributeUse::value>(), "seed", &Node::seed);
  visit(Use<AttributeUse::value>(), "stream", &Node::stream);
  visit(Use<AttributeUse::plan>(), "axes", &Node::axes);
  visit(Use<AttributeUse::plan>(), "precision", &Node::precision);
  visit(Use<AttributeUse::code>(), "axis", &Node::axis);
  visit(Use<AttributeUse::code>(), "ddof", &Node::ddof);
  visit(Use<AttributeUse::code>(), "mode", &Node::mode);
}

// An attribute as the 64-bit words that hashes and keys take: a number is
// one word, a list its length and then its items, a constant its two parts.
template <class Put>
void attribute_words(const ConstantValue& v, Put&& put) {
  put(std::bit_cast<std::uint64_t>(v.f));
  put(std::uint64_t(v.i));
}
template <class Put>
void attribute_words(const std::vector<int>& v, Put&& put) {
  put(std::uint64_t(v.size()));
  for (int x : v) put(std::uint64_t(x));
}
template <class T, class Put>
requires std::is_integral_v<T> || std::is_enum_v<T>
void attribute_words(T v, Put&& put) {
  put(std::uint64_t(v));
}

// Whether two nodes' attributes are all equal.
bool same_attributes(const Node& a, const Node& b);
// The attributes written into kernel code, for a kernel signature: "" when
// all are at their defaults, else "@name=value" for each that is not.
std::string code_attributes(const Node& n);

}  // namespace nf
