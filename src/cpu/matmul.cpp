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

// One task: the rows [i0, i1) and columns [j0, j1) of one product, summed
// over [k0, k1). Part 0 writes C; part p > 0 writes buffer p - 1, which is
// added to C once every part is done.
struct Tile {
  std::int64_t mat, i0, i1, j0, j1, k0, k1, part;
};

// How each product is cut: pm x pn tiles of C, each sum in pk parts.
struct Grid {
  std::int64_t pm = 1, pn = 1, pk = 1;
};

// OpenBLAS runs one thread per call (blas.cpp says why), so numfuse cuts the
// work: one task per matrix where a batch has enough of them, else each
// matrix into as many tasks as threads. The cut moves the least memory: a
// grid of pm x pn tiles reads A pn times and B pm times, and cutting the sum
// instead writes and reads a buffer the size of C per extra part. Long sums
// (2000x40000 by 40000x2000) gain most: 2x2 tiles of 4 parts read 1.28 GB
// less than 4x4 tiles, for 48 MB of buffers. The buffers stay within an
// eighth of the operands.
Grid grid_for(std::int64_t count, std::int64_t m, std::int64_t n, std::int64_t k, int threads) {
  // Below this many multiply-adds a task is not worth another thread.
  constexpr std::int64_t kMinTask = std::int64_t(1) << 21;
  // A part of a sum shorter than this leaves OpenBLAS's blocks half empty.
  constexpr std::int64_t kMinPart = 256;
  if (count >= threads) return {};
  const double macs = double(m) * double(n) * double(k);
  const std::int64_t tasks =
      std::int64_t(std::clamp(macs / kMinTask, 1.0, double((threads + count - 1) / count)));
  Grid best;
  double best_cost = -1;
  for (std::int64_t pk = 1; pk <= tasks; ++pk) {
    if (tasks % pk ||
        (pk > 1 && (k / pk < kMinPart || 8.0 * (pk - 1) * m * n > double(m + n) * k))) {
      continue;
    }
    for (std::int64_t pm = 1; pm <= tasks / pk; ++pm) {
      if ((tasks / pk) % pm) continue;
      const std::int64_t pn = tasks / pk / pm;
      if (pm > m || pn > n) continue;
      const double cost = double(m) * k * pn + double(n) * k * pm + 2.0 * (pk - 1) * m * n;
      if (best_cost < 0 || cost < best_cost) best = {pm, pn, pk}, best_cost = cost;
    }
  }
  return best;
}

std::vector<Tile> tiles(std::int64_t count, std::int64_t m, std::int64_t n, std::int64_t k,
                        const Grid& g) {
  // Parts start on a 64-byte line of A's rows and B's columns.
  const auto k_at = [&](std::int64_t q) { return q == g.pk ? k : k * q / g.pk / 16 * 16; };
  std::vector<Tile> out;
  for (std::int64_t z = 0; z < count; ++z) {
    for (std::int64_t r = 0; r < g.pm; ++r) {
      for (std::int64_t c = 0; c < g.pn; ++c) {
        for (std::int64_t q = 0; q < g.pk; ++q) {
          out.push_back({z, m * r / g.pm, m * (r + 1) / g.pm, n * c / g.pn, n * (c + 1) / g.pn,
                         k_at(q), k_at(q + 1), q});
        }
      }
    }
  }
  return out;
}

// One task's product: its rows of A, its columns of B and its part of the
// sum, wherever they lie, into c (an m x n matrix).
template <class T>
void gemm_tile(const T* a, Layout la, const T* b, Layout lb, T* c, std::int64_t n, const Tile& t) {
  a += la.trans == Blas::no_trans ? t.i0 * la.ld + t.k0 : t.k0 * la.ld + t.i0;
  b += lb.trans == Blas::no_trans ? t.k0 * lb.ld + t.j0 : t.j0 * lb.ld + t.k0;
  c += t.i0 * n + t.j0;
  const int tm = int(t.i1 - t.i0), tn = int(t.j1 - t.j0), tk = int(t.k1 - t.k0);
  if (tm == 0 || tn == 0) return;
  if constexpr (std::is_same_v<T, nf_f32>) {
    blas().sgemm(Blas::row_major, la.trans, lb.trans, tm, tn, tk, 1.0f, a, int(la.ld), b,
                 int(lb.ld), 0.0f, c, int(n));
  } else {
    blas().dgemm(Blas::row_major, la.trans, lb.trans, tm, tn, tk, 1.0, a, int(la.ld), b, int(lb.ld),
                 0.0, c, int(n));
  }
}

// Adds the parts' buffers (pk - 1 of `size` elements each) into c.
template <class T>
void add_parts(T* c, const T* parts, std::int64_t pk, std::int64_t size) {
  constexpr std::int64_t kBlock = std::int64_t(1) << 16;
  parallel_for((size + kBlock - 1) / kBlock, [&](std::int64_t blk) {
    const std::int64_t e0 = blk * kBlock, e1 = std::min(size, e0 + kBlock);
    for (std::int64_t p = 0; p + 1 < pk; ++p) {
      const T* part = parts + p * size;
      for (std::int64_t e = e0; e < e1; ++e) c[e] += part[e];
    }
  });
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
      const std::int64_t count = std::int64_t(mats.size());
      const Grid g = grid_for(count, m, n, k, blas().tiled ? thread_count() : 1);
      const std::vector<Tile> work = tiles(count, m, n, k, g);
      const Value parts = g.pk > 1 ? make_value(a.ctype, {g.pk - 1, count, m, n}) : Value{};
      const auto run = [&](std::int64_t w) {
        const Tile& t = work[w];
        const auto& [oa, ob, oc] = mats[t.mat];
        T* c = t.part == 0 ? out.data<T>() : parts.data<T>() + (t.part - 1) * count * m * n;
        gemm_tile<T>(a.data<T>() + oa, la, b.data<T>() + ob, lb, c + oc, n, t);
      };
      // Where the user gave OpenBLAS its threads, its calls run one by one.
      if (blas().tiled) {
        parallel_for(std::int64_t(work.size()), run);
      } else {
        for (std::int64_t w = 0; w < std::int64_t(work.size()); ++w) run(w);
      }
      if (g.pk > 1) add_parts(out.data<T>(), parts.data<T>(), g.pk, count * m * n);
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
