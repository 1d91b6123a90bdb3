// Matrix products: OpenBLAS for f32/f64, plain loops (wrapping, as numpy) for
// integers and bool. Operands are passed to BLAS where they lie, transposed
// ones as layouts; OpenBLAS runs on as many threads as the blocks do.
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/shape_util.hpp"
#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"
#include "runtime/nf_ops.h"

namespace nf::cpu {
namespace {

// OpenBLAS sizes its pool from the cores it sees, which in a container can be
// more than the quota it may use; its own variables still win. Its kernels
// are chosen when it loads: OpenBLAS 0.3.21 (Debian 12) does not recognise
// some current virtualised Xeons and takes its generic SSE3 ("Prescott")
// kernels, about six times slower; only OPENBLAS_CORETYPE, set before the
// program starts, changes that, so it is said once.
void set_up_blas() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!std::getenv("OPENBLAS_NUM_THREADS") && !std::getenv("GOTO_NUM_THREADS")) {
      openblas_set_num_threads(thread_count());
    }
    const char* core = openblas_get_corename();
    if (core && std::strcmp(core, "Prescott") == 0 && __builtin_cpu_supports("avx2")) {
      std::fprintf(stderr,
                   "numfuse: OpenBLAS runs its generic Prescott kernels on a CPU with AVX2; "
                   "products are several times faster with OPENBLAS_CORETYPE=%s set\n",
                   __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell");
    }
  });
}

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

void matmul(const Value& a_in, const Value& b_in, const Value& out) {
  Value a = a_in, b = b_in;
  const bool blas = a.ctype == f32 || a.ctype == f64;
  if (!blas || !layout_of(a).ok) a = contiguous(a);
  if (!blas || !layout_of(b).ok) b = contiguous(b);
  const Shape& out_shape = out.shape;
  const int nd = int(out_shape.size());
  const std::int64_t m = out_shape[nd - 2], n = out_shape[nd - 1], k = a.shape.back();
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
  if (blas) set_up_blas();
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
        parallel_for(m, [&](std::int64_t i) {
          for (std::int64_t j = 0; j < n; ++j) {
            T acc = T(0);
            for (std::int64_t q = 0; q < k; ++q) {
              acc = nf_add(acc, nf_multiply(pa[i * k + q], pb[q * n + j]));
            }
            c[i * n + j] = acc;
          }
        });
      }
    }
  });
}

}  // namespace nf::cpu
