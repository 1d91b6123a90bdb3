#include "numfuse/expr.hpp"

#include "graph/build.hpp"

namespace nf {

Expr::Expr(const Array& a) : node_(make_leaf(a)) {}

DType Expr::dtype() const {
  return node_->dtype;
}
const Shape& Expr::shape() const {
  return node_->shape;
}

std::shared_ptr<const Node> Expr::bool_scalar(bool v) {
  return make_weak_bool(v);
}
std::shared_ptr<const Node> Expr::int_scalar(std::int64_t v) {
  return make_weak_int(v);
}
std::shared_ptr<const Node> Expr::float_scalar(double v) {
  return make_weak_float(v);
}

}  // namespace nf
