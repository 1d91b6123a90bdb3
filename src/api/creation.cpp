// Creation functions. Each builds an expression (constants, index ramps) and
// evaluates it, so every backend makes arrays the way it computes.
#include <cmath>
#include <cstring>
#include <string>

#include "api/execute.hpp"
#include "core/scalar_fits.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {

namespace {

// A new array of `shape` filled with `value`, for creation function `op`.
// The size and the value are checked before anything is allocated.
Array filled(const char* op, const Shape& shape, double value, DType dtype) {
  checked_bytes(shape, dtype, op);
  check_float_fits(value, dtype, op);
  Array out = new_array(dtype, shape);
  execute(make_broadcast(make_constant(value, dtype), shape), out);
  return out;
}

}  // namespace

Array empty(const Shape& shape, DType dtype) {
  checked_bytes(shape, dtype, "nf::empty");
  return new_array(dtype, shape);
}

Array full(const Shape& shape, double value, DType dtype) {
  return filled("nf::full", shape, value, dtype);
}

Array zeros(const Shape& shape, DType dtype) {
  return filled("nf::zeros", shape, 0.0, dtype);
}
Array ones(const Shape& shape, DType dtype) {
  return filled("nf::ones", shape, 1.0, dtype);
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
  const double count = std::max(0.0, std::ceil((stop - start) / step));
  // 2^63, exact as a double, is the first count an int64 cannot hold.
  if (!(count < 9223372036854775808.0)) {
    throw ShapeError("arange(" + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                     std::to_string(step) + "): more values than a 64-bit count holds");
  }
  const auto n = static_cast<std::int64_t>(count);
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
  checked_bytes(shape, dtype, "nf::array");
  Array out = new_array(dtype, shape);
  copy_to_array(out, data);
  return out;
}

Array array(const void* data, std::size_t count, DType dtype, const Shape& shape) {
  if (checked_numel(shape, "nf::array") != std::int64_t(count)) {
    throw ShapeError("array: " + std::to_string(count) + " values cannot fill shape " +
                     to_string(shape) + " (" + std::to_string(numel(shape)) + " elements)");
  }
  return array(data, dtype, shape);
}

}  // namespace nf
