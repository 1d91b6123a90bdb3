// dot and matmul with numpy's rules for 1-D operands, and the thread's
// precision mode for the f32 products they build.
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {
namespace {

thread_local MatmulPrecision t_precision = MatmulPrecision::f32;

// matmul on operands of rank >= 1: a 1-D left operand is a row, a 1-D right
// operand a column, and the added axis is removed from the result.
Expr matmul_promoting(const Expr& a, const Expr& b) {
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw ShapeError("nf::matmul: operands must have at least 1 dimension, got shapes " +
                     to_string(a.shape()) + " and " + to_string(b.shape()));
  }
  NodePtr an = a.node(), bn = b.node();
  if (a.ndim() == 1) an = make_reshape(an, {1, a.shape()[0]});
  if (b.ndim() == 1) bn = make_reshape(bn, {b.shape()[0], 1});
  NodePtr r = make_matmul(an, bn, t_precision);
  Shape out = r->shape;
  if (b.ndim() == 1) out.erase(out.end() - 1);                        // the column's N == 1
  if (a.ndim() == 1) out.erase(out.end() - (b.ndim() == 1 ? 1 : 2));  // the row's M == 1
  return Expr(make_reshape(r, out));
}

}  // namespace

void set_matmul_precision(MatmulPrecision p) {
  t_precision = p;
}

void set_matmul_precision(DType t) {
  if (t != f32 && t != bf16) {
    throw ValueError("nf::set_matmul_precision: " + std::string(name(t)) +
                     " names no precision mode (nf::f32, nf::tf32 or nf::bf16)");
  }
  t_precision = t == f32 ? MatmulPrecision::f32 : MatmulPrecision::bf16;
}

MatmulPrecision matmul_precision() {
  return t_precision;
}

Expr matmul(const Expr& a, const Expr& b) {
  return matmul_promoting(a, b);
}

Expr dot(const Expr& a, const Expr& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  if (a.ndim() > 2 || b.ndim() > 2) {
    throw ShapeError("nf::dot: operands of shapes " + to_string(a.shape()) + " and " +
                     to_string(b.shape()) +
                     " have more than 2 dimensions; use nf::matmul for batched products");
  }
  return matmul_promoting(a, b);
}

}  // namespace nf
