// Values made from nothing: random numbers (the Philox streams that the GPU
// reproduces) and index ramps.
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "runtime/nf_cast.h"
#include "runtime/nf_philox.h"

namespace nf::cpu {

Value random(OpId op, const Shape& shape, DType dtype, std::uint64_t seed, std::uint64_t stream) {
  // Numbers of an f64 op come from the f64 stream, all others from the f32
  // stream, whatever the CPU compute dtype.
  const bool wide = dtype == f64;
  Value v = make_value(wide ? f64 : f32, shape);
  const std::int64_t n = numel(shape);
  const bool normal = op == OpId::rand_normal;
  // Each Philox block is drawn once for the elements that share it, as in a
  // GPU kernel's vector loop.
  if (wide) {
    nf_f64* p = v.data<nf_f64>();
    nf_rand_memo_f64 m = {~0ull, 0, 0};
    for (std::int64_t i = 0; i < n; ++i) {
      p[i] =
          normal ? nf_rand_normal_f64(m, seed, stream, i) : nf_rand_uniform_f64(m, seed, stream, i);
    }
  } else {
    nf_f32* p = v.data<nf_f32>();
    nf_rand_memo_f32 m = {~0ull, 0, 0, 0, 0};
    for (std::int64_t i = 0; i < n; ++i) {
      p[i] =
          normal ? nf_rand_normal_f32(m, seed, stream, i) : nf_rand_uniform_f32(m, seed, stream, i);
    }
  }
  return compute_type(dtype) == v.ctype ? v : cast(v, f64);
}

Value iota(const Shape& shape, int axis, DType dtype) {
  Value v = make_value(compute_type(dtype), shape);
  Strides along(shape.size(), 0);
  along[axis] = 1;
  visit_ctype(v.ctype, [&](auto tag) {
    using T = decltype(tag);
    T* p = v.data<T>();
    for_each_row<1>(shape, {&along},
                    [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
                      for (std::int64_t i = 0; i < n; ++i) {
                        p[first + i] = nf_convert<T>(off[0] + i * step[0]);
                      }
                    });
  });
  return v;
}

}  // namespace nf::cpu
