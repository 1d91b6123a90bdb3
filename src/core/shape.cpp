#include <algorithm>
#include <string>

#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/shape.hpp"

namespace nf {

namespace {

std::string prefix(const char* op) {
  return op ? std::string(op) + ": " : std::string();
}

// Decimal digits of a 128-bit count: a byte size past 2^64 is still named exactly.
__extension__ typedef unsigned __int128 u128;
std::string to_string(u128 v) {
  std::string digits;
  do {
    digits.insert(digits.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v);
  return digits;
}

}  // namespace

std::int64_t checked_numel(const Shape& shape, const char* op) {
  // The product of the nonzero dimensions must fit, even where a zero makes
  // the count 0: strides are products of trailing dimensions.
  std::int64_t nonzero = 1;
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) {
      throw ShapeError(prefix(op) + "negative dimension " + std::to_string(d) + " in shape " +
                       to_string(shape));
    }
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(nonzero, d, &nonzero)) {
      throw ShapeError(prefix(op) + "shape " + to_string(shape) +
                       " has more elements than a 64-bit count holds (" +
                       std::to_string(INT64_MAX) + ")");
    }
  }
  return empty ? 0 : nonzero;
}

std::size_t checked_bytes(const Shape& shape, DType t, const char* op) {
  const u128 bytes = u128(checked_numel(shape, op)) * itemsize(t);
  if (bytes > kMaxArrayBytes) {
    throw OutOfMemory(prefix(op) + "an array of shape " + to_string(shape) + " and dtype " +
                      std::string(name(t)) + " needs " + to_string(bytes) +
                      " bytes, more than any device addresses (" + std::to_string(kMaxArrayBytes) +
                      ")");
  }
  return std::size_t(bytes);
}

std::int64_t numel(const Shape& s) {
  return checked_numel(s, nullptr);
}

std::string to_string(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) +
                       " do not broadcast (axis " + std::to_string(i) + ": " + std::to_string(da) +
                       " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= shape[i];
  }
  return s;
}

int normalize_axis(int axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim) {
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of range for an array of " + std::to_string(ndim) + " dimensions");
  }
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const Axes& axes, int ndim, const char* op) {
  std::vector<int> out;
  if (axes.is_all()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes.list()) out.push_back(normalize_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw ShapeError(std::string(op) + ": repeated axis in the axis list");
  }
  return out;
}

Strides broadcast_strides(const Shape& from, const Strides& strides, const Shape& to) {
  if (from.size() > to.size()) {
    throw InternalError("broadcast_strides: shape " + to_string(from) + " cannot broadcast to " +
                        to_string(to));
  }
  Strides out(to.size(), 0);
  const std::size_t lead = to.size() - from.size();
  for (std::size_t i = 0; i < from.size(); ++i) {
    out[lead + i] = from[i] == 1 ? 0 : strides[i];
  }
  return out;
}

std::optional<MatrixStorage> matrix_storage(std::int64_t rows, std::int64_t cols, std::int64_t rs,
                                            std::int64_t cs) {
  if ((cs == 1 || cols == 1) && rs >= std::max<std::int64_t>(1, cols))
    return MatrixStorage{true, rs};
  if ((rs == 1 || rows == 1) && cs >= std::max<std::int64_t>(1, rows))
    return MatrixStorage{false, cs};
  return std::nullopt;
}

}  // namespace nf
