// Matrix products: OpenBLAS for f32/f64, plain loops (wrapping, as numpy) for
// integers and bool. Transposed operands are passed to BLAS as layouts.
#include <cblas.h>

#include "core/shape_util.hpp"
#include "cpu/kernels.hpp"
#include "runtime/nf_ops.h"

namespace nf::cpu {
namespace {

// How BLAS reads the last two axes of an operand without a copy.
struct Layout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  std::int64_t ld = 0;
};

Layout layout_of(const Value& v) {
  const int nd = int(v.shape.size());
  const auto m =
      matrix_storage(v.shape[nd - 2], v.shape[nd - 1], v.strides[nd - 2], v.strides[nd - 1]);
  if (!m) return {};
  return {true, m->by_rows ? CblasNoTrans : CblasTrans, m->ld};
}

template <class T>
void gemm(const T* a, Layout la, const T* b, Layout lb, T* c, std::int64_t m, std::int64_t n,
          std::int64_t k) {
  if constexpr (std::is_same_v<T, nf_f32>) {
    cblas_sgemm(CblasRowMajor, la.trans, lb.trans, int(m), int(n), int(k), 1.0f, a, int(la.ld), b,
                int(lb.ld), 0.0f, c, int(n));
  } else {
    cblas_dgemm(CblasRowMajor, la.trans, lb.trans, int(m), int(n), int(k), 1.0, a, int(la.ld), b,
                int(lb.ld), 0.0, c, int(n));
  }
}

}  // namespace

Value matmul(const Value& a_in, const Value& b_in, const Shape& out_shape) {
  Value a = a_in, b = b_in;
  const bool blas = a.ctype == f32 || a.ctype == f64;
  if (!blas || !layout_of(a).ok) a = contiguous(a);
  if (!blas || !layout_of(b).ok) b = contiguous(b);
  const int nd = int(out_shape.size());
  const std::int64_t m = out_shape[nd - 2], n = out_shape[nd - 1], k = a.shape.back();
  Value out = make_value(a.ctype, out_shape);
  const Shape batch(out_shape.begin(), out_shape.end() - 2);
  auto batch_strides = [&](const Value& v) {
    const Shape vb(v.shape.begin(), v.shape.end() - 2);
    const Strides vs(v.strides.begin(), v.strides.end() - 2);
    return broadcast_strides(vb, vs, batch);
  };
  const Strides sa = batch_strides(a), sb = batch_strides(b), sc = contiguous_strides(batch);
  std::vector<std::array<std::int64_t, 3>> mats;  // offsets of each product's a, b, c
  for_each_row<3>(batch, {&sa, &sb, &sc},
                  [&](std::int64_t, const auto& off, const auto& step, std::int64_t cnt) {
                    for (std::int64_t i = 0; i < cnt; ++i) {
                      mats.push_back({off[0] + i * step[0], off[1] + i * step[1],
                                      (off[2] + i * step[2]) * m * n});
                    }
                  });
  visit_ctype(a.ctype, [&](auto tag) {
    using T = decltype(tag);
    for (const auto& [oa, ob, oc] : mats) {
      T* c = out.data<T>() + oc;
      if constexpr (std::is_same_v<T, nf_f32> || std::is_same_v<T, nf_f64>) {
        if (m == 0 || n == 0) continue;
        if (k == 0) {
          std::fill(c, c + m * n, T(0));
          continue;
        }
        gemm<T>(a.data<T>() + oa, layout_of(a), b.data<T>() + ob, layout_of(b), c, m, n, k);
      } else {
        const T* pa = a.data<T>() + oa;
        const T* pb = b.data<T>() + ob;
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            T acc = T(0);
            for (std::int64_t q = 0; q < k; ++q) {
              acc = nf_add(acc, nf_multiply(pa[i * k + q], pb[q * n + j]));
            }
            c[i * n + j] = acc;
          }
        }
      }
    }
  });
  return out;
}

}  // namespace nf::cpu
