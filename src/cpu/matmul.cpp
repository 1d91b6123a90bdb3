// Matrix products: OpenBLAS for f32/f64 (cpu/blas.hpp), plain loops
// (wrapping, as numpy) for integers and bool. Operands are passed to BLAS
// where they lie, transposed ones as layouts.
#include <algorithm>
#include <climits>

#include "core/shape_util.hpp"
#include "cpu/blas.hpp"
#include "cpu/kernels.hpp"
#include "cpu/thread_pool.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_ops.h"

namespace nf::cpu {
namespace {

// How BLAS reads the last two axes of an operand without a copy.
struct Layout {
  bool ok = false;
  int trans = Blas::no_trans;
  std::int64_t ld = 0;
};

Layout layout_of(const Value& v) {
  const int nd = int(v.shape.size());
  const auto m =
      matrix_storage(v.shape[nd - 2], v.shape[nd - 1], v.strides[nd - 2], v.strides[nd - 1]);
  if (!m) return {};
  return {true, m->by_rows ? Blas::no_trans : Blas::trans, m->ld};
}

// The rows [i0, i1) and columns [j0, j1) of one product.
struct Tile {
  std::int64_t mat, i0, i1, j0, j1;
};

// The products as tasks for the pool. OpenBLAS runs one thread per call
// (blas.cpp says why), so numfuse cuts the work: one task per matrix where a
// batch has enough of them, else each matrix into a grid of tiles of C, one
// per thread. The grid is as square as the tiles allow, since each tile packs
// its rows of A and its columns of B: a grid of pm x pn packs A pn times and
// B pm times.
std::vector<Tile> tiles(std::int64_t count, std::int64_t m, std::int64_t n, std::int64_t k,
                        int threads) {
  // Below this many multiply-adds a product is not worth another thread.
  constexpr std::int64_t kMinTile = std::int64_t(1) << 21;
  std::int64_t per_matrix = 1;
  if (count < threads) {
    per_matrix = std::min<std::int64_t>((threads + count - 1) / count,
                                        std::max<std::int64_t>(m * n * k / kMinTile, 1));
  }
  std::int64_t pm = 1, pn = per_matrix;
  for (std::int64_t r = 1; r <= per_matrix; ++r) {
    if (per_matrix % r) continue;
    const std::int64_t c = per_matrix / r;
    if (r <= m && c <= n && m * c + n * r < m * pn + n * pm) pm = r, pn = c;
  }
  pm = std::min(pm, std::max<std::int64_t>(m, 1));
  pn = std::min(pn, std::max<std::int64_t>(n, 1));
  std::vector<Tile> out;
  for (std::int64_t z = 0; z < count; ++z) {
    for (std::int64_t r = 0; r < pm; ++r) {
      for (std::int64_t c = 0; c < pn; ++c) {
        out.push_back({z, m * r / pm, m * (r + 1) / pm, n * c / pn, n * (c + 1) / pn});
      }
    }
  }
  return out;
}

// One tile's product: its rows of A and columns of B, wherever they lie.
template <class T>
void gemm_tile(const T* a, Layout la, const T* b, Layout lb, T* c, std::int64_t n, std::int64_t k,
               const Tile& t) {
  a += la.trans == Blas::no_trans ? t.i0 * la.ld : t.i0;
  b += lb.trans == Blas::no_trans ? t.j0 : t.j0 * lb.ld;
  c += t.i0 * n + t.j0;
  const int tm = int(t.i1 - t.i0), tn = int(t.j1 - t.j0);
  if (tm == 0 || tn == 0) return;
  if constexpr (std::is_same_v<T, nf_f32>) {
    blas().sgemm(Blas::row_major, la.trans, lb.trans, tm, tn, int(k), 1.0f, a, int(la.ld), b,
                 int(lb.ld), 0.0f, c, int(n));
  } else {
    blas().dgemm(Blas::row_major, la.trans, lb.trans, tm, tn, int(k), 1.0, a, int(la.ld), b,
                 int(lb.ld), 0.0, c, int(n));
  }
}

}  // namespace

void matmul(const Value& a_in, const Value& b_in, const Value& out) {
  Value a = a_in, b = b_in;
  const bool by_blas = a.ctype == f32 || a.ctype == f64;
  if (!by_blas || !layout_of(a).ok) a = contiguous(a);
  if (!by_blas || !layout_of(b).ok) b = contiguous(b);
  const Shape& out_shape = out.shape;
  const int nd = int(out_shape.size());
  const std::int64_t m = out_shape[nd - 2], n = out_shape[nd - 1], k = a.shape.back();
  const Shape batch(out_shape.begin(), out_shape.end() - 2);
  const Layout la = layout_of(a), lb = layout_of(b);
  // CBLAS takes its sizes and leading dimensions as int.
  if (by_blas && std::max({m, n, k, la.ld, lb.ld}) > INT_MAX) {
    throw ShapeError("matmul of " + to_string(a.shape) + " and " + to_string(b.shape) +
                     ": the CPU backend's BLAS takes matrix sides and strides up to 2^31-1");
  }
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
    if constexpr (std::is_same_v<T, nf_f32> || std::is_same_v<T, nf_f64>) {
      if (m == 0 || n == 0) return;
      if (k == 0) {
        std::fill(out.data<T>(), out.data<T>() + std::int64_t(mats.size()) * m * n, T(0));
        return;
      }
      const std::vector<Tile> work =
          tiles(std::int64_t(mats.size()), m, n, k, blas().tiled ? thread_count() : 1);
      const auto run = [&](std::int64_t w) {
        const Tile& t = work[w];
        const auto& [oa, ob, oc] = mats[t.mat];
        gemm_tile<T>(a.data<T>() + oa, la, b.data<T>() + ob, lb, out.data<T>() + oc, n, k, t);
      };
      // Where the user gave OpenBLAS its threads, its calls run one by one.
      if (blas().tiled) return parallel_for(std::int64_t(work.size()), run);
      for (std::int64_t w = 0; w < std::int64_t(work.size()); ++w) run(w);
      return;
    }
    for (const auto& [oa, ob, oc] : mats) {
      const T* pa = a.data<T>() + oa;
      const T* pb = b.data<T>() + ob;
      T* c = out.data<T>() + oc;
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
  });
}

}  // namespace nf::cpu
