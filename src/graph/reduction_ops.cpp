// The public reductions, one per NF_REDUCTION row of the op table, by the
// arguments its `form` column names. Reduced axes are kept with length 1.
#include "graph/build.hpp"
#include "numfuse/array.hpp"
#include "numfuse/ops.hpp"

namespace nf {

#define NF_REDUCTION_FORM_axes(name)                         \
  Expr name(const Expr& x, Axes axes) {                      \
    return Expr(make_reduction(OpId::name, x.node(), axes)); \
  }
#define NF_REDUCTION_FORM_ddof(name)                               \
  Expr name(const Expr& x, Axes axes, int ddof) {                  \
    return Expr(make_reduction(OpId::name, x.node(), axes, ddof)); \
  }
#define NF_REDUCTION_FORM_axis(name)                           \
  Expr name(const Expr& x, int axis) {                         \
    return Expr(make_reduction(OpId::name, x.node(), axis));   \
  }                                                            \
  Expr name(const Expr& x) {                                   \
    return Expr(make_reduction(OpId::name, x.node(), Axes{})); \
  }
// nf::all is also the whole-axis index (a[nf::all, 0]): an object whose call
// reduces.
#define NF_REDUCTION_FORM_tag(name)                          \
  Expr AllTag::operator()(const Expr& x, Axes axes) const {  \
    return Expr(make_reduction(OpId::name, x.node(), axes)); \
  }
#define NF_REDUCTION(name, rule, accepts, form, ...) NF_REDUCTION_FORM_##form(name)
#include "graph/ops.def"

}  // namespace nf
