// The CPU interpreter's values: a strided view of host memory holding
// elements of a compute type (b8 u8 i32 i64 f32 f64; f16 and bf16 compute as
// f32, and f32 as f64 when set_cpu_compute_dtype(f64) is on).
#pragma once

#include <array>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/compute_ctype.hpp"
#include "core/storage.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"
#include "runtime/nf_defs.h"

namespace nf::cpu {

struct Value {
  DType ctype = f32;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  std::shared_ptr<Storage> storage;

  template <class T>
  T* data() const {
    return static_cast<T*>(storage->data) + offset;
  }
};

// The compute type of a dtype under the current CPU compute setting.
DType compute_type(DType t);

// A new contiguous value.
Value make_value(DType ctype, const Shape& shape);
bool is_contiguous(const Value& v);
Value contiguous(const Value& v);

template <class T>
constexpr DType ctype_of() {
  if constexpr (std::is_same_v<T, nf_b8>)
    return DType::b8;
  else if constexpr (std::is_same_v<T, nf_u8>)
    return DType::u8;
  else if constexpr (std::is_same_v<T, nf_i32>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, nf_i64>)
    return DType::i64;
  else if constexpr (std::is_same_v<T, nf_f32>)
    return DType::f32;
  else
    return DType::f64;
}

// Calls f(first, offsets, inner_strides, inner_len) for each innermost row of
// `shape` in C order: `first` is the row's linear index, offsets[j] the row's
// first element in operand j (whose strides are strides[j]).
template <std::size_t K, class F>
void for_each_row(const Shape& shape, const std::array<const Strides*, K>& strides, F&& f) {
  const std::int64_t n = numel(shape);
  if (n == 0) return;
  const int nd = int(shape.size());
  const std::int64_t inner = nd ? shape[nd - 1] : 1;
  std::array<std::int64_t, K> off{}, step{};
  for (std::size_t j = 0; j < K; ++j) step[j] = nd ? (*strides[j])[nd - 1] : 0;
  std::vector<std::int64_t> idx(nd > 0 ? nd - 1 : 0, 0);
  for (std::int64_t first = 0; first < n; first += inner) {
    f(first, off, step, inner);
    for (int d = nd - 2; d >= 0; --d) {
      for (std::size_t j = 0; j < K; ++j) off[j] += (*strides[j])[d];
      if (++idx[d] < shape[d]) break;
      for (std::size_t j = 0; j < K; ++j) off[j] -= (*strides[j])[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Calls f(i, at) for i in 0 .. n-1, with at = i * step: contiguous rows get
// a loop of their own, with the step known to be 1, which the compiler
// vectorises (a loop of unknown step it leaves scalar).
template <class F>
void along_row(std::int64_t n, std::int64_t step, F&& f) {
  if (step == 1) {
    for (std::int64_t i = 0; i < n; ++i) f(i, i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) f(i, i * step);
  }
}

// The same over two operands, at0 = i * step0 and at1 = i * step1.
template <class F>
void along_row(std::int64_t n, std::int64_t step0, std::int64_t step1, F&& f) {
  if (step0 == 1 && step1 == 1) {
    for (std::int64_t i = 0; i < n; ++i) f(i, i, i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) f(i, i * step0, i * step1);
  }
}

}  // namespace nf::cpu
