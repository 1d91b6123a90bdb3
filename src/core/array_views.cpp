// Array handles and the views that need no computation: they only rewrite
// shape, strides and offset over shared storage.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "numfuse/array.hpp"
#include "numfuse/errors.hpp"

namespace nf {

Array::Array() : storage_(std::make_shared<Storage>()) {}

Array::Array(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides,
             std::int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {}

Array& Array::operator=(const Array& other) & = default;
Array& Array::operator=(Array&& other) & noexcept = default;

Device Array::device() const {
  return storage_->device;
}

Array Array::view(Shape shape, Strides strides, std::int64_t offset) const {
  Array v(storage_, dtype_, std::move(shape), std::move(strides), offset);
  v.read_only_ = read_only_;
  return v;
}

bool Array::writeable() const {
  if (read_only_) return false;
  if (size() == 0) return true;  // no element to repeat, whatever the strides
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] > 1 && strides_[i] == 0) return false;
  }
  return true;
}

bool Array::is_contiguous() const {
  std::int64_t expect = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

namespace {

// numpy's slice adjustment: clamps start/stop and counts the elements.
void resolve_slice(const Slice& s, std::int64_t n, int axis, std::int64_t& start,
                   std::int64_t& length) {
  const std::int64_t step = s.step;
  if (step == 0) {
    throw ShapeError("slice on axis " + std::to_string(axis) + ": step must not be zero");
  }
  auto clamp = [&](std::optional<std::int64_t> v, std::int64_t dflt, std::int64_t lo,
                   std::int64_t hi) {
    if (!v) return dflt;
    std::int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lo, hi);
  };
  std::int64_t stop;
  if (step > 0) {
    start = clamp(s.start, 0, 0, n);
    stop = clamp(s.stop, n, 0, n);
    length = stop > start ? (stop - start - 1) / step + 1 : 0;
  } else {
    start = clamp(s.start, n - 1, -1, n - 1);
    stop = clamp(s.stop, -1, -1, n - 1);
    // Unsigned: -step overflows for the most negative step.
    length = start > stop
                 ? std::int64_t(std::uint64_t(start - stop - 1) / (0 - std::uint64_t(step))) + 1
                 : 0;
  }
}

}  // namespace

Array Array::index(const std::vector<Index>& idx) const {
  if (idx.size() > shape_.size()) {
    throw ShapeError("too many indices (" + std::to_string(idx.size()) +
                     ") for an array of shape " + to_string(shape_));
  }
  Shape shape;
  Strides strides;
  std::int64_t offset = offset_;
  for (std::size_t axis = 0; axis < shape_.size(); ++axis) {
    const std::int64_t n = shape_[axis];
    if (axis >= idx.size() || idx[axis].is_slice()) {
      std::int64_t start = 0, length = n;
      if (axis < idx.size()) resolve_slice(idx[axis].slice(), n, int(axis), start, length);
      const std::int64_t step = axis < idx.size() ? idx[axis].slice().step : 1;
      if (length > 0) offset += start * strides_[axis];
      // A step that overflows the stride takes at most one element, whose
      // stride is never used.
      std::int64_t stride;
      if (__builtin_mul_overflow(strides_[axis], step, &stride)) stride = 0;
      shape.push_back(length);
      strides.push_back(stride);
    } else {
      const std::int64_t i = idx[axis].index();
      if (i < -n || i >= n) {
        throw ShapeError("index " + std::to_string(i) + " is out of bounds for axis " +
                         std::to_string(axis) + " of shape " + to_string(shape_));
      }
      offset += (i < 0 ? i + n : i) * strides_[axis];
    }
  }
  return view(std::move(shape), std::move(strides), offset);
}

Array Array::transpose(std::vector<int> perm) const {
  const int nd = ndim();
  if (perm.empty()) {
    perm.resize(nd);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  if (int(perm.size()) != nd) {
    throw ShapeError("transpose: permutation of " + std::to_string(perm.size()) +
                     " axes for an array of shape " + to_string(shape_));
  }
  std::vector<bool> seen(nd, false);
  Shape shape(nd);
  Strides strides(nd);
  for (int i = 0; i < nd; ++i) {
    const int a = normalize_axis(perm[i], nd, "transpose");
    if (seen[a]) throw ShapeError("transpose: axis " + std::to_string(a) + " repeated");
    seen[a] = true;
    shape[i] = shape_[a];
    strides[i] = strides_[a];
  }
  return view(std::move(shape), std::move(strides), offset_);
}

Array Array::squeeze(Axes axes) const {
  std::vector<bool> drop(shape_.size(), false);
  if (axes.is_all()) {
    for (std::size_t i = 0; i < shape_.size(); ++i) drop[i] = shape_[i] == 1;
  } else {
    for (int a : normalize_axes(axes, ndim(), "squeeze")) {
      if (shape_[a] != 1) {
        throw ShapeError("squeeze: axis " + std::to_string(a) + " of shape " + to_string(shape_) +
                         " has length " + std::to_string(shape_[a]) + ", not 1");
      }
      drop[a] = true;
    }
  }
  Shape shape;
  Strides strides;
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (drop[i]) continue;
    shape.push_back(shape_[i]);
    strides.push_back(strides_[i]);
  }
  return view(std::move(shape), std::move(strides), offset_);
}

Array Array::expand_dims(int axis) const {
  const int a = normalize_axis(axis, ndim() + 1, "expand_dims");
  Shape shape = shape_;
  Strides strides = strides_;
  shape.insert(shape.begin() + a, 1);
  strides.insert(strides.begin() + a, 0);
  return view(std::move(shape), std::move(strides), offset_);
}

Array Array::broadcast_to(const Shape& shape) const {
  checked_numel(shape, "broadcast_to");
  if (shape.size() < shape_.size() || broadcast_shapes(shape_, shape, "broadcast_to") != shape) {
    throw ShapeError("broadcast_to: cannot broadcast shape " + to_string(shape_) + " to " +
                     to_string(shape));
  }
  // Read-only as numpy's: a write through it would be a write through
  // repeated elements, or look like one to a reader of the code.
  Array v = view(shape, broadcast_strides(shape_, strides_, shape), offset_);
  v.read_only_ = true;
  return v;
}

}  // namespace nf
