// nf::Array: a reference-counted handle to typed, strided storage.
//
// Copying an Array shares storage (as numpy views and torch::Tensor do);
// copy() makes a new buffer. Slices, transposes, broadcasts and reshapes of
// contiguous data are views.
//
// Assignment follows numpy:
//   a = expr;          rebinds `a` to the result (numpy `a = expr`);
//   a(...) = expr;     writes through the view into the original (numpy
//                      `a[...] = expr`), casting to its dtype;
//   a += expr;         updates a's storage in place, visible through every
//                      view of it; the dtype must be same-kind castable.
// The last two need a writeable() array.
// A statement that throws leaves every array unchanged.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

#include "numfuse/device.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/expr.hpp"
#include "numfuse/shape.hpp"

namespace nf {

struct Storage;  // internal: src/core/storage.hpp

// ---- indexing --------------------------------------------------------------

inline constexpr std::nullopt_t none = std::nullopt;

struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
};

// start:stop:step; pass nf::none for an open end, as in `a[::-1]`.
inline Slice slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop = none,
                   std::int64_t step = 1) {
  return {start, stop, step};
}

// nf::all is both the full slice `:` (in `a(nf::all, 0)`) and the `all`
// reduction (`nf::all(a > 0, 1)`).
struct AllTag {
  Expr operator()(const Expr& x, Axes axes = {}) const;
};
inline constexpr AllTag all{};

class Index {
 public:
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Index(T i) : is_slice_(false), index_(static_cast<std::int64_t>(i)) {}
  Index(Slice s) : is_slice_(true), slice_(s) {}
  Index(AllTag) : is_slice_(true) {}

  bool is_slice() const { return is_slice_; }
  std::int64_t index() const { return index_; }
  const Slice& slice() const { return slice_; }

 private:
  bool is_slice_;
  std::int64_t index_ = 0;
  Slice slice_;
};

// ---- the array -------------------------------------------------------------

class Array {
 public:
  // An empty f32 array of shape (0,).
  Array();
  // Evaluates `e` into a new array.
  Array(const Expr& e);
  Array(const Array&) = default;
  Array(Array&&) noexcept = default;
  ~Array() = default;

  Array& operator=(const Array& other) &;
  Array& operator=(Array&& other) & noexcept;
  Array& operator=(const Expr& e) &;
  // Assigning to a temporary (a view from operator()) writes through it.
  const Array& operator=(const Array& other) &&;
  const Array& operator=(const Expr& e) &&;

  Array& operator+=(const Expr& e);
  Array& operator-=(const Expr& e);
  Array& operator*=(const Expr& e);
  Array& operator/=(const Expr& e);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t size() const { return numel(shape_); }
  Device device() const;
  bool is_contiguous() const;
  // numpy's flags.writeable: false for arrays from broadcast_to and every
  // view of them, and for any view whose elements alias each other (a stride
  // 0 on an axis longer than 1). Writing to one (`v += 1`, `v(...) = x`)
  // throws ValueError and changes nothing.
  bool writeable() const;

  // Views.
  template <class... I>
  Array operator()(const I&... idx) const {
    return index({Index(idx)...});
  }
  Array index(const std::vector<Index>& idx) const;
  Array T() const { return transpose(); }
  Array transpose(std::vector<int> perm = {}) const;  // default: reverse axes
  Array reshape(Shape shape) const;                   // one -1 allowed; copies if no view exists
  Array squeeze(Axes axes = {}) const;
  Array expand_dims(int axis) const;
  Array broadcast_to(const Shape& shape) const;

  // New buffers.
  Array copy() const;
  Array astype(DType t) const;
  Array to(Device d) const;  // a contiguous copy on device d

  template <class T>
  std::vector<T> to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<std::uint8_t> tmp(static_cast<std::size_t>(size()));
      read_into(tmp.data(), bool_);
      return std::vector<bool>(tmp.begin(), tmp.end());
    } else {
      std::vector<T> out(static_cast<std::size_t>(size()));
      read_into(out.data(), dtype_of<T>());
      return out;
    }
  }
  // The one element of a size-1 array.
  template <class T>
  T item() const {
    if constexpr (std::is_same_v<T, bool>) {
      std::uint8_t v;
      read_item(&v, bool_);
      return v != 0;
    } else {
      T v;
      read_item(&v, dtype_of<T>());
      return v;
    }
  }

  // Copies all elements, in C order and converted to `t`, to `dst`.
  void read_into(void* dst, DType t) const;

  // Internal: numfuse's own layers build arrays from storage and a view.
  Array(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides,
        std::int64_t offset);
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  void read_item(void* dst, DType t) const;
  void write(const Expr& e) const;
  void update(const Expr& e) const;
  // A view of the same storage, read-only when this array is.
  Array view(Shape shape, Strides strides, std::int64_t offset) const;

  std::shared_ptr<Storage> storage_;
  DType dtype_ = f32;
  Shape shape_{0};
  Strides strides_{1};
  std::int64_t offset_ = 0;
  bool read_only_ = false;
};

template <class T>
T Expr::item() const {
  return Array(*this).item<T>();
}
template <class T>
std::vector<T> Expr::to_vector() const {
  return Array(*this).to_vector<T>();
}

// ---- creation --------------------------------------------------------------

Array empty(const Shape& shape, DType dtype = default_float);
Array zeros(const Shape& shape, DType dtype = default_float);
Array ones(const Shape& shape, DType dtype = default_float);
Array full(const Shape& shape, double value, DType dtype = default_float);
Array eye(std::int64_t n, DType dtype = default_float);
Array linspace(double start, double stop, std::int64_t num = 50, DType dtype = default_float);
Array arange(double start, double stop, double step, DType dtype);

// numpy's arange: integer arguments give i64, floating ones the default float.
template <class A, class B, class C = int>
Array arange(A start, B stop, C step = 1) {
  constexpr bool ints = std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>;
  return arange(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step),
                ints ? i64 : default_float);
}
template <class A>
Array arange(A stop) {
  return arange(A(0), stop, 1);
}

// Copies `data` (C order) into a new array of `shape` (1-D when omitted).
Array array(const void* data, DType dtype, const Shape& shape);
// The same, checking that `count` elements fill `shape`.
Array array(const void* data, std::size_t count, DType dtype, const Shape& shape);
template <class T>
Array array(const T* data, const Shape& shape) {
  return array(static_cast<const void*>(data), dtype_of<T>(), shape);
}
template <class T>
Array array(const std::vector<T>& data, const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<std::uint8_t> tmp(data.begin(), data.end());
    return array(static_cast<const void*>(tmp.data()), tmp.size(), bool_, shape);
  } else {
    return array(static_cast<const void*>(data.data()), data.size(), dtype_of<T>(), shape);
  }
}
template <class T>
Array array(const std::vector<T>& data) {
  return array(data, Shape{static_cast<std::int64_t>(data.size())});
}

// Joining arrays, as numpy's: a new array of the operands' promoted dtype on
// the first operand's device. concatenate joins along an existing axis, on
// which the shapes may differ; stack along a new axis, arrays of one shape.
Array concatenate(const std::vector<Expr>& xs, int axis = 0);
Array stack(const std::vector<Expr>& xs, int axis = 0);

}  // namespace nf
