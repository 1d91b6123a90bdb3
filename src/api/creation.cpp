// Creation functions. Each builds an expression (constants, index ramps) and
// evaluates it, so every backend makes arrays the way it computes.
#include <cmath>
#include <cstring>
#include <string>

#include "api/execute.hpp"
#include "core/storage.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {

Array empty(const Shape& shape, DType dtype) {
  return new_array(dtype, shape);
}

Array full(const Shape& shape, double value, DType dtype) {
  Array out = new_array(dtype, shape);
  execute(make_broadcast(make_constant(value, dtype), shape), out);
  return out;
}

Array zeros(const Shape& shape, DType dtype) {
  return full(shape, 0.0, dtype);
}
Array ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

Array eye(std::int64_t n, DType dtype) {
  if (n < 0) throw ValueError("eye: n must be >= 0, got " + std::to_string(n));
  const Expr rows(make_iota({n, n}, 0, i64)), cols(make_iota({n, n}, 1, i64));
  return Array(astype(rows == cols, dtype));
}

Array arange(double start, double stop, double step, DType dtype) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw ValueError("arange(" + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                     std::to_string(step) + "): the bounds must be finite and the step nonzero");
  }
  const auto n = static_cast<std::int64_t>(std::max(0.0, std::ceil((stop - start) / step)));
  const Expr i(make_iota({n}, 0, f64));
  return Array(astype(i * step + start, dtype));
}

Array linspace(double start, double stop, std::int64_t num, DType dtype) {
  if (num < 0) throw ValueError("linspace: num must be >= 0, got " + std::to_string(num));
  const double step = num > 1 ? (stop - start) / double(num - 1) : 0.0;
  const Expr i(make_iota({num}, 0, f64));
  const Expr values = i * step + start;
  // The last value is `stop` exactly, as in numpy (with one value: `start`).
  return Array(astype(num > 1 ? where(i == double(num - 1), stop, values) : values, dtype));
}

Array array(const void* data, DType dtype, const Shape& shape) {
  Array out = new_array(dtype, shape);
  copy_to_array(out, data);
  return out;
}

Array array(const void* data, std::size_t count, DType dtype, const Shape& shape) {
  if (numel(shape) != std::int64_t(count)) {
    throw ShapeError("array: " + std::to_string(count) + " values cannot fill shape " +
                     to_string(shape) + " (" + std::to_string(numel(shape)) + " elements)");
  }
  return array(data, dtype, shape);
}

}  // namespace nf
