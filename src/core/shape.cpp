#include <algorithm>
#include <string>

#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/shape.hpp"

namespace nf {

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
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
