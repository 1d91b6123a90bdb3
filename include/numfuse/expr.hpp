// nf::Expr: a lazy, typed expression. Every operator and function on arrays
// returns one; nothing runs until it is assigned to an Array, passed to
// nf::eval, or read. An Expr owns its inputs, so it can be stored and returned
// freely (no dangling references as with compile-time expression templates).
//
// Inputs are read when the expression is evaluated, not when it is built.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"

namespace nf {

class Array;
struct Node;  // internal: src/graph/node.hpp

class Expr {
 public:
  Expr(const Array& a);

  // C++ arithmetic scalars are weak, as Python scalars are in NumPy 2:
  // `A * 0.5` keeps A's dtype when A is floating.
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Expr(T v) : Expr(scalar_node(v)) {}

  DType dtype() const;
  const Shape& shape() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  std::int64_t size() const { return numel(shape()); }

  // Evaluate and read, as Array's members of the same names (array.hpp).
  template <class T>
  T item() const;
  template <class T>
  std::vector<T> to_vector() const;

  explicit Expr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  const std::shared_ptr<const Node>& node() const { return node_; }

 private:
  template <class T>
  static std::shared_ptr<const Node> scalar_node(T v) {
    if constexpr (std::is_same_v<T, bool>)
      return bool_scalar(v);
    else if constexpr (std::is_integral_v<T>)
      return int_scalar(static_cast<std::int64_t>(v));
    else
      return float_scalar(static_cast<double>(v));
  }
  static std::shared_ptr<const Node> bool_scalar(bool v);
  static std::shared_ptr<const Node> int_scalar(std::int64_t v);
  static std::shared_ptr<const Node> float_scalar(double v);

  std::shared_ptr<const Node> node_;
};

}  // namespace nf
