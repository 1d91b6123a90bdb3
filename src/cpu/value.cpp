#include "cpu/value.hpp"

#include <cstring>

#include "core/shape_util.hpp"
#include "cpu/scratch.hpp"

namespace nf::cpu {

DType compute_type(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
    case DType::f32:
      return cpu_compute_dtype();
    default:
      return t;
  }
}

Value make_value(DType ctype, const Shape& shape) {
  Value v;
  v.ctype = ctype;
  v.shape = shape;
  v.strides = contiguous_strides(shape);
  v.storage = scratch_storage(static_cast<std::size_t>(numel(shape)) * itemsize(ctype));
  return v;
}

bool is_contiguous(const Value& v) {
  return v.strides == contiguous_strides(v.shape);
}

Value contiguous(const Value& v) {
  if (is_contiguous(v)) return v;
  Value out = make_value(v.ctype, v.shape);
  visit_ctype(v.ctype, [&](auto tag) {
    using T = decltype(tag);
    const T* src = v.data<T>();
    T* dst = out.data<T>();
    for_each_row<1>(v.shape, {&v.strides},
                    [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
                      const T* row = src + off[0];
                      T* out_row = dst + first;
                      along_row(n, step[0],
                                [&](std::int64_t i, std::int64_t at) { out_row[i] = row[at]; });
                    });
  });
  return out;
}

}  // namespace nf::cpu
