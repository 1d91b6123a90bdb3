// Shape functions on lazy expressions (Array has view versions of these).
#include <string>

#include "core/shape_util.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {

Expr reshape(const Expr& x, Shape shape) {
  return Expr(make_reshape(x.node(), std::move(shape)));
}

Expr transpose(const Expr& x, std::vector<int> perm) {
  return Expr(make_permute(x.node(), std::move(perm)));
}

Expr squeeze(const Expr& x, Axes axes) {
  const Shape& s = x.shape();
  std::vector<bool> drop(s.size(), false);
  if (axes.is_all()) {
    for (std::size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  } else {
    for (int a : normalize_axes(axes, x.ndim(), "squeeze")) {
      if (s[a] != 1) {
        throw ShapeError("squeeze: axis " + std::to_string(a) + " of shape " + to_string(s) +
                         " has length " + std::to_string(s[a]) + ", not 1");
      }
      drop[a] = true;
    }
  }
  Shape out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!drop[i]) out.push_back(s[i]);
  }
  return reshape(x, std::move(out));
}

Expr expand_dims(const Expr& x, int axis) {
  Shape s = x.shape();
  s.insert(s.begin() + normalize_axis(axis, x.ndim() + 1, "expand_dims"), 1);
  return reshape(x, std::move(s));
}

Expr broadcast_to(const Expr& x, Shape shape) {
  return Expr(make_broadcast(x.node(), shape));
}

}  // namespace nf
