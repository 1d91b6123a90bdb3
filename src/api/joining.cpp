// Joining arrays, as numpy's concatenate and stack: a new array of the
// operands' promoted dtype, each operand written into its slice of it.
#include <string>
#include <vector>

#include "api/execute.hpp"
#include "core/shape_util.hpp"
#include "numfuse/array.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {
namespace {

std::string shapes_of(const std::vector<Expr>& xs) {
  std::string all;
  for (const Expr& x : xs) all += (all.empty() ? "" : ", ") + to_string(x.shape());
  return all;
}

}  // namespace

Array concatenate(const std::vector<Expr>& xs, int axis) {
  if (xs.empty()) throw ValueError("concatenate: needs at least one array");
  const int ndim = xs[0].ndim();
  if (ndim == 0) throw ShapeError("concatenate: 0-d arrays cannot be concatenated; stack them");
  const int a = normalize_axis(axis, ndim, "concatenate");
  Shape shape = xs[0].shape();
  DType dtype = xs[0].dtype();
  for (std::size_t i = 1; i < xs.size(); ++i) {
    bool fits = xs[i].ndim() == ndim;
    for (int d = 0; fits && d < ndim; ++d) fits = d == a || xs[i].shape()[d] == shape[d];
    if (!fits) {
      throw ShapeError("concatenate: along axis " + std::to_string(a) +
                       " the arrays must match in every other axis; got " + shapes_of(xs));
    }
    shape[a] += xs[i].shape()[a];
    dtype = promote_types(dtype, xs[i].dtype());
  }
  checked_bytes(shape, dtype, "concatenate");
  Array out = new_array(dtype, shape, device_of(xs[0]));
  // Every axis whole but the joined one, which takes each operand's slice.
  std::vector<Index> place(static_cast<std::size_t>(ndim), Index{all});
  std::int64_t start = 0;
  for (const Expr& x : xs) {
    const std::int64_t stop = start + x.shape()[a];
    place[std::size_t(a)] = slice(start, stop);
    out.index(place) = x;
    start = stop;
  }
  return out;
}

Array stack(const std::vector<Expr>& xs, int axis) {
  if (xs.empty()) throw ValueError("stack: needs at least one array");
  for (const Expr& x : xs) {
    if (x.shape() != xs[0].shape())
      throw ShapeError("stack: the arrays must have one shape; got " + shapes_of(xs));
  }
  const int a = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Expr> rows;
  for (const Expr& x : xs) rows.push_back(expand_dims(x, a));
  return concatenate(rows, a);
}

}  // namespace nf
