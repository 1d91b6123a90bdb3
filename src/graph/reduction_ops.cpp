// The public reductions. Reduced axes are kept with length 1.
#include "graph/build.hpp"
#include "numfuse/array.hpp"
#include "numfuse/ops.hpp"

namespace nf {

#define NF_SIMPLE_REDUCTION(name)                            \
  Expr name(const Expr& x, Axes axes) {                      \
    return Expr(make_reduction(OpId::name, x.node(), axes)); \
  }
NF_SIMPLE_REDUCTION(sum)
NF_SIMPLE_REDUCTION(prod)
NF_SIMPLE_REDUCTION(mean)
NF_SIMPLE_REDUCTION(min)
NF_SIMPLE_REDUCTION(max)
NF_SIMPLE_REDUCTION(any)
NF_SIMPLE_REDUCTION(logsumexp)
#undef NF_SIMPLE_REDUCTION

Expr AllTag::operator()(const Expr& x, Axes axes) const {
  return Expr(make_reduction(OpId::all, x.node(), axes));
}

Expr var(const Expr& x, Axes axes, int ddof) {
  return Expr(make_reduction(OpId::var, x.node(), axes, ddof));
}
Expr std(const Expr& x, Axes axes, int ddof) {
  return Expr(make_reduction(OpId::std, x.node(), axes, ddof));
}

Expr argmin(const Expr& x, int axis) {
  return Expr(make_reduction(OpId::argmin, x.node(), axis));
}
Expr argmax(const Expr& x, int axis) {
  return Expr(make_reduction(OpId::argmax, x.node(), axis));
}
Expr argmin(const Expr& x) {
  return Expr(make_reduction(OpId::argmin, x.node(), Axes{}));
}
Expr argmax(const Expr& x) {
  return Expr(make_reduction(OpId::argmax, x.node(), Axes{}));
}

}  // namespace nf
