// Array members that evaluate: construction from expressions, assignment,
// in-place updates and reads. Every one builds the whole statement first, so
// an error leaves the target unchanged.
#include <optional>
#include <string>
#include <vector>

#include "api/execute.hpp"
#include "api/recording.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/ops.hpp"

namespace nf {
namespace {

// Whether `a = e` may write into a's buffer rather than a new one: nothing
// but `a` holds the buffer (so nobody can tell, and `e` does not read it),
// and it is exactly the buffer a new array of e's dtype and shape would get.
// A warm statement then neither allocates nor frees device memory.
bool can_reuse(const Array& a, const Expr& e) {
  if (a.storage().use_count() != 1 || a.dtype() != e.dtype() || a.shape() != e.shape() ||
      a.offset() != 0 || a.device() != device_of(e)) {
    return false;
  }
  return a.is_contiguous() &&
         a.storage()->bytes == std::size_t(numel(a.shape())) * itemsize(a.dtype());
}

}  // namespace

Array::Array(const Expr& e) : Array(new_array(e.dtype(), e.shape(), device_of(e))) {
  execute(e.node(), *this);
}

Array& Array::operator=(const Expr& e) & {
  if (can_reuse(*this, e)) {
    execute(e.node(), *this);
  } else {
    if (recording_anywhere()) [[unlikely]] {
      refuse_rebinding(*this, e);
    }
    *this = Array(e);
  }
  return *this;
}

const Array& Array::operator=(const Array& other) && {
  write(Expr(other));
  return *this;
}

const Array& Array::operator=(const Expr& e) && {
  write(e);
  return *this;
}

// numpy's a[...] = e: e broadcasts to the view's shape and is cast to its dtype.
void Array::write(const Expr& e) const {
  if (!writeable()) {
    // Writing each element of such a view writes its aliases too: numpy
    // makes these views read-only.
    throw ValueError("assignment destination is read-only: the view of shape " + to_string(shape_) +
                     " and strides " + to_string(strides_) +
                     " comes from broadcast_to or repeats elements (a stride 0); write to its "
                     "base array, or to a copy()");
  }
  const Shape& s = e.shape();
  if (s.size() > shape_.size() || broadcast_shapes(s, shape_, "assignment") != shape_) {
    throw ShapeError("assignment: a value of shape " + to_string(s) +
                     " cannot be written into an array of shape " + to_string(shape_));
  }
  execute(make_broadcast(make_cast(e.node(), dtype_), shape_), *this);
}

// numpy's a op= e: in place, and the result must be same-kind castable.
void Array::update(const Expr& e) const {
  if (!can_cast_same_kind(e.dtype(), dtype_)) {
    throw DTypeError("in-place update of a " + std::string(name(dtype_)) + " array with a " +
                     std::string(name(e.dtype())) +
                     " result would lose its kind; write a = a op x, or cast first");
  }
  write(e);
}

Array& Array::operator+=(const Expr& e) {
  update(*this + e);
  return *this;
}
Array& Array::operator-=(const Expr& e) {
  update(*this - e);
  return *this;
}
Array& Array::operator*=(const Expr& e) {
  update(*this * e);
  return *this;
}
Array& Array::operator/=(const Expr& e) {
  update(*this / e);
  return *this;
}

Array Array::copy() const {
  return Array(Expr(*this));
}

Array Array::astype(DType t) const {
  return Array(nf::astype(*this, t));
}

Array Array::to(Device d) const {
  std::vector<char> host(std::size_t(size()) * itemsize(dtype_));
  read_into(host.data(), dtype_);
  Array out = new_array(dtype_, shape_, d);
  copy_to_array(out, host.data());
  return out;
}

Array Array::reshape(Shape shape) const {
  const NodePtr r = make_reshape(make_leaf(*this), std::move(shape));
  // Not viewable: one copy in C order, which is then viewed.
  if (!is_contiguous()) return copy().reshape(r->shape);
  return view(r->shape, contiguous_strides(r->shape), offset_);
}

void Array::read_into(void* dst, DType t) const {
  const Array src = (t == dtype_ && is_contiguous()) ? *this : Array(nf::astype(*this, t));
  copy_from_array(dst, src);
}

void Array::read_item(void* dst, DType t) const {
  if (size() != 1) {
    throw ValueError("item(): the array of shape " + to_string(shape_) + " has " +
                     std::to_string(size()) + " elements, not 1");
  }
  read_into(dst, t);
}

}  // namespace nf
