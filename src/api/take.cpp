// numpy's take, and selection by a boolean mask on top of it: a mask is read
// back, its true places become indices, and the take gathers them.
#include <cstdint>
#include <string>
#include <vector>

#include "api/execute.hpp"
#include "core/shape_util.hpp"
#include "graph/build.hpp"
#include "numfuse/array.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {
namespace {

// numpy's IndexError for an index outside -n .. n-1. One number comes back
// from the device: the largest index counted as numpy wraps it (v, or -v - 1
// below 0), which is below n exactly when every index is in range.
void check_in_range(const Array& indices, std::int64_t n, int axis, const Shape& shape) {
  if (indices.size() == 0) return;
  const Expr folded =
      indices.dtype() == u8 ? Expr(indices) : where(indices < 0, -(indices + 1), indices);
  if (max(folded).item<std::int64_t>() < n) return;
  const std::int64_t low = min(indices).item<std::int64_t>();
  const std::int64_t high = max(indices).item<std::int64_t>();
  const std::int64_t bad = high >= n ? high : low;
  throw ValueError("nf::take: index " + std::to_string(bad) + " is out of bounds for axis " +
                   std::to_string(axis) + " with size " + std::to_string(n) + " (array of shape " +
                   to_string(shape) + ")");
}

// The places where the host copy of a mask is true, on `device`.
Array true_places(const Expr& condition, std::int64_t limit, const char* op, Device device) {
  const std::vector<std::uint8_t> mask = Array(astype(condition, u8)).to_vector<std::uint8_t>();
  std::vector<std::int64_t> places;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    if (std::int64_t(i) >= limit) {
      throw ValueError(std::string(op) + ": the condition is true at " +
                       std::to_string(std::int64_t(i)) + ", past the " + std::to_string(limit) +
                       " elements it selects from");
    }
    places.push_back(std::int64_t(i));
  }
  return array(places).to(device);
}

}  // namespace

Expr take(const Expr& a, const Expr& indices, int axis, TakeMode mode) {
  if (a.ndim() == 0) {
    throw ShapeError("nf::take: a 0-d array has no axis to take along; reshape it first");
  }
  const int ax = normalize_axis(axis, a.ndim(), "nf::take");
  const std::int64_t n = a.shape()[ax];
  // wrap and clip read an array of indices where it lies, as any leaf is
  // read; raise takes a copy, so that the values it checked are the values
  // the kernel reads, whatever is written to the user's array meanwhile.
  const NodePtr& given = indices.node();
  const Array index =
      mode != TakeMode::raise && given->op == OpId::leaf ? *given->array : Array(indices);
  // The node first: it checks the indices' dtype and device.
  NodePtr taken;
  if (index.ndim() > 0) {
    taken = make_take(a.node(), Expr(index).node(), ax, mode);
  } else {
    // A single index drops the axis, as numpy's: the take of one, reshaped.
    Shape shape = a.shape();
    shape.erase(shape.begin() + ax);
    taken =
        make_reshape(make_take(a.node(), make_reshape(Expr(index).node(), {1}), ax, mode), shape);
  }
  if (n == 0 && index.size() > 0) {
    throw ValueError("nf::take: cannot take " + std::to_string(index.size()) +
                     " elements from axis " + std::to_string(ax) + " of length 0 (array of shape " +
                     to_string(a.shape()) + ")");
  }
  if (mode == TakeMode::raise) check_in_range(index, n, ax, a.shape());
  return Expr(taken);
}

Expr take(const Expr& a, const Expr& indices) {
  return take(reshape(a, {std::int64_t(a.size())}), indices, 0);
}

Expr extract(const Expr& condition, const Expr& a) {
  if (condition.size() != a.size()) {
    throw ShapeError("nf::extract: the condition of shape " + to_string(condition.shape()) +
                     " must have as many elements as the array of shape " + to_string(a.shape()));
  }
  const Array places = true_places(condition, a.size(), "nf::extract", device_of(a));
  return take(a, places);
}

Expr compress(const Expr& condition, const Expr& a, int axis) {
  if (condition.ndim() != 1) {
    throw ShapeError("nf::compress: the condition must be 1-D, got shape " +
                     to_string(condition.shape()));
  }
  if (a.ndim() == 0) throw ShapeError("nf::compress: a 0-d array has no axis to select along");
  const int ax = normalize_axis(axis, a.ndim(), "nf::compress");
  const Array places = true_places(condition, a.shape()[ax], "nf::compress", device_of(a));
  return take(a, places, ax);
}

}  // namespace nf
