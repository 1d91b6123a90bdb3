// The public elementwise functions, one per row of the op table.
#include "api/execute.hpp"
#include "graph/build.hpp"
#include "numfuse/ops.hpp"

namespace nf {
namespace {

template <class... E>
Expr apply(OpId op, const E&... e) {
  return within_depth_cap(Expr(make_elementwise(op, {e.node()...})));
}

}  // namespace

#define NF_ARGS_1 const Expr& a
#define NF_ARGS_2 const Expr &a, const Expr &b
#define NF_ARGS_3 const Expr &a, const Expr &b, const Expr &c
#define NF_PASS_1 a
#define NF_PASS_2 a, b
#define NF_PASS_3 a, b, c
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) \
  Expr name(NF_ARGS_##arity) {                         \
    return apply(OpId::name, NF_PASS_##arity);         \
  }
#include "graph/ops.def"

Expr logistic(const Expr& x) {
  return sigmoid(x);
}
Expr pow(const Expr& a, const Expr& b) {
  return power(a, b);
}
Expr astype(const Expr& x, DType t) {
  return within_depth_cap(Expr(make_cast(x.node(), t)));
}

}  // namespace nf
