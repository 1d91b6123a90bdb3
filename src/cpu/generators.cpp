// Values made from nothing: random numbers (the Philox streams that the GPU
// reproduces) and index ramps, for one block at a time.
#include "core/shape_util.hpp"
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "runtime/nf_cast.h"
#include "runtime/nf_philox.h"

namespace nf::cpu {
namespace {

// Calls f(linear_index, n, dst_first) for each innermost row of box b of
// `shape`: its elements are linear_index, linear_index + 1, ... of `shape`.
template <class F>
void for_each_box_row(const Shape& shape, const Box& b, F&& f) {
  const Strides cs = contiguous_strides(shape);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) base += b.lo[d] * cs[d];
  const Shape bs = b.shape();
  for_each_row<1>(bs, {&cs}, [&](std::int64_t first, const auto& off, const auto&, std::int64_t n) {
    f(base + off[0], n, first);
  });
}

}  // namespace

Value random(OpId op, const Shape& shape, const Box& b, DType dtype, std::uint64_t seed,
             std::uint64_t stream) {
  // Numbers of an f64 op come from the f64 stream, all others from the f32
  // stream, whatever the CPU compute dtype.
  const bool wide = dtype == f64;
  Value v = make_value(wide ? f64 : f32, b.shape());
  const bool normal = op == OpId::rand_normal;
  // Each Philox block is drawn once for the elements that share it, as in a
  // GPU kernel's vector loop.
  if (wide) {
    nf_f64* p = v.data<nf_f64>();
    nf_rand_memo_f64 m = {~0ull, 0, 0};
    for_each_box_row(shape, b, [&](std::int64_t i0, std::int64_t n, std::int64_t o) {
      for (std::int64_t i = i0; i < i0 + n; ++i) {
        p[o++] = normal ? nf_rand_normal_f64(m, seed, stream, i)
                        : nf_rand_uniform_f64(m, seed, stream, i);
      }
    });
  } else {
    nf_f32* p = v.data<nf_f32>();
    nf_rand_memo_f32 m = {~0ull, 0, 0, 0, 0};
    for_each_box_row(shape, b, [&](std::int64_t i0, std::int64_t n, std::int64_t o) {
      for (std::int64_t i = i0; i < i0 + n; ++i) {
        p[o++] = normal ? nf_rand_normal_f32(m, seed, stream, i)
                        : nf_rand_uniform_f32(m, seed, stream, i);
      }
    });
  }
  return compute_type(dtype) == v.ctype ? v : cast(v, f64);
}

Value iota(const Box& b, int axis, DType dtype) {
  const Shape shape = b.shape();
  Value v = make_value(compute_type(dtype), shape);
  Strides along(shape.size(), 0);
  along[axis] = 1;
  const std::int64_t start = b.lo[axis];
  visit_ctype(v.ctype, [&](auto tag) {
    using T = decltype(tag);
    T* p = v.data<T>();
    for_each_row<1>(shape, {&along},
                    [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
                      for (std::int64_t i = 0; i < n; ++i) {
                        p[first + i] = nf_convert<T>(start + off[0] + i * step[0]);
                      }
                    });
  });
  return v;
}

}  // namespace nf::cpu
