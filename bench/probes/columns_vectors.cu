// Probe, not a numfuse kernel: sum(x, 1) of an A x R x C array (A = 1:
// sum(x, 0)) where a thread takes V consecutive outputs and reads 16 bytes
// of each of its rows (for halves also 4: `words`, two outputs a thread),
// against a thread an output reading an element a row (numfuse's columns
// walk). A warp's 32 threads take 32 x V consecutive outputs, so each of
// its loads reads 512 bytes of a row; the block's 8 warps take every 8th
// row of a slice of the rows, meet through shared memory, and the slices
// of a column (where the outputs alone would not fill the device) add into
// the f32 result atomically. Rows need not start
// on 16 bytes: a thread reads the two aligned vectors around its V
// elements and shifts them into place with funnel shifts (`shifted`), the
// shift the same for the whole row. Where R is at most 128, also
// x - mean(x, 1) in one read, the block's rows held in registers
// (column_centre). It asks how near copy speed reductions over leading and
// middle axes come, with and without the broadcast back, when a load and a
// store take 16 bytes, on rows of any width; and, for few columns, sums
// over the array read flat (flat_sums).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_vectors bench/probes/columns_vectors.cu
//   /tmp/columns_vectors [f16|f32 A R C]
//
// Figures: bench/RESULTS.md, "Columns read in 16-byte vectors" (H200; the
// words form not yet run). The stores' rules are checked without a GPU by
// bench/probes/columns_vectors_stores.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "probe_util.cuh"

namespace {

constexpr int kWarps = 8;   // a block's warps, each on its own rows
constexpr int kUnroll = 4;  // rows whose loads are in flight at once

struct alignas(16) Words {
  std::uint32_t w[4];
};

// The 16 bytes that start `bytes` (a multiple of the element size, below
// 16) into the 32 of lo then hi.
__device__ __forceinline__ Words shifted(const Words& lo, const Words& hi, int bytes) {
  const std::uint32_t w[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3],
                              hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
  const int q = bytes >> 2, bits = (bytes & 3) * 8;
  Words out;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // w[q + i] and w[q + i + 1] without indexing registers at run time.
    std::uint32_t a = w[i], b = w[i + 1];
#pragma unroll
    for (int k = 1; k < 4; ++k) {
      if (q == k) {
        a = w[i + k];
        b = w[i + k + 1];
      }
    }
    out.w[i] = __funnelshift_r(a, b, bits);
  }
  return out;
}

template <class T>
__device__ __forceinline__ float element(const Words& v, int j) {
  if constexpr (sizeof(T) == 2) {
    const std::uint32_t w = v.w[j / 2];
    return __half2float(__ushort_as_half((unsigned short)(j % 2 ? w >> 16 : w & 0xffff)));
  } else {
    return __uint_as_float(v.w[j]);
  }
}

// Element j of a vector set to v.
template <class T>
__device__ __forceinline__ void set_element(Words& v, int j, float x) {
  if constexpr (sizeof(T) == 2) {
    const std::uint32_t h = __half_as_ushort(__float2half(x));
    std::uint32_t& w = v.w[j / 2];
    w = j % 2 ? (w & 0xffffu) | (h << 16) : (w & 0xffff0000u) | h;
  } else {
    v.w[j] = __float_as_uint(x);
  }
}

__device__ __forceinline__ Words shfl_down(const Words& v, int by) {
  Words out;
#pragma unroll
  for (int i = 0; i < 4; ++i) out.w[i] = __shfl_down_sync(0xffffffffu, v.w[i], by);
  return out;
}

// Elements [from, to) of v stored one by one (j a constant in each test,
// so that v stays in registers).
template <class T, int V>
__device__ __forceinline__ void store_elements(T* row, const Words& v, int from, int to) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (j >= from && j < to) row[j] = fromf<T>(element<T>(v, j));
  }
}

// sum(x, 0) of an R x C array of few columns (C at most kFlatColumns) read
// as the flat array it is: consecutive threads take consecutive 16-byte
// vectors, and each thread steps `stride` vectors, a multiple of the period
// lcm(C, V) / V, so that lane j of its vectors stays in column
// (t * V + j) % C and adds into one register. Threads past the last whole
// period of the grid stay idle. A block's threads meet in shared memory, a
// column at a time, and blocks add into the f32 result atomically.
constexpr int kFlatColumns = 4096;

template <class T>
__global__ void __launch_bounds__(256)
    flat_sums(float* out, const T* in, long n, int C, long stride) {
  constexpr int V = 16 / sizeof(T);
  __shared__ float sums[kFlatColumns];
  for (int c = threadIdx.x; c < C; c += blockDim.x) sums[c] = 0;
  __syncthreads();
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc[V] = {};
  if (t < stride) {
    const long vectors = (n + V - 1) / V;
    const Words* p = (const Words*)in;
    for (long v = t; v < vectors; v += kUnroll * stride) {
      Words x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (v + u * stride < vectors) x[u] = p[v + u * stride];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long e = (v + u * stride) * V;  // the vector's first element
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (e + j < n) acc[j] += element<T>(x[u], j);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) atomicAdd(&sums[int((t * V + j) % C)], acc[j]);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) atomicAdd(&out[c], sums[c]);
}

// x - mean(x, 1) of an A x R x C array, R at most kWarps * H: a block's 8
// warps hold every 8th row of 32 threads' outputs in registers, one read
// and one write. V = 1: an element a row a thread, loads and stores (as
// numfuse's held columns). V = 16 / sizeof(T): 16 bytes a row, loaded as
// column_sums does; stored in aligned vectors, each made of this thread's
// last `lead` results and the next thread's first (a shuffle and a funnel
// shift), element by element where a vector would leave the row or the
// warp, or the next thread's outputs are not the next in memory.
template <class T, int V, int H>
__global__ void __launch_bounds__(32 * kWarps)
    column_centre(T* out, const T* in, int A, int R, int C) {
  __shared__ float part[kWarps][32][V];
  __shared__ float mean[32][V];
  const int G = (C + V - 1) / V;
  const long groups = long(A) * G;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long g = long(blockIdx.x) * 32 + lane;
  const bool live = g < groups;
  const long a = live ? g / G : -1;
  const int c0 = live ? int(g % G) * V : 0;
  const long first = live ? a * long(R) * C + c0 : 0;
  Words held[H];
  int lead[H];
  float acc[V] = {};
#pragma unroll
  for (int k = 0; k < H; ++k) {
    const int r = warp + k * kWarps;
    lead[k] = 0;
    if (live && r < R) {
      const long e = first + long(r) * C;
      if constexpr (V == 1) {
        held[k].w[0] = __float_as_uint(tof(in[e]));
      } else {
        lead[k] = int(e % V);
        const Words* p = (const Words*)(in + (e - lead[k]));
        held[k] = p[0];
        if (lead[k]) held[k] = shifted(held[k], p[1], lead[k] * int(sizeof(T)));
      }
    }
  }
#pragma unroll
  for (int k = 0; k < H; ++k) {
    if (live && warp + k * kWarps < R) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        acc[j] += V == 1 ? __uint_as_float(held[k].w[0]) : element<T>(held[k], j);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) part[warp][lane][j] = acc[j];
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float s = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) s += part[w][lane][j];
      mean[lane][j] = s / R;
    }
  }
  __syncthreads();
  // Whether the next thread's outputs follow this one's in memory.
  const long next_a = __shfl_down_sync(0xffffffffu, a, 1);
  const bool follows = lane < 31 && next_a == a && live && c0 + V < C;
#pragma unroll
  for (int k = 0; k < H; ++k) {
    const int r = warp + k * kWarps;
    Words y = held[k];
    if constexpr (V == 1) {
      if (live && r < R)
        out[first + long(r) * C] = fromf<T>(__uint_as_float(y.w[0]) - mean[lane][0]);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) set_element<T>(y, j, element<T>(held[k], j) - mean[lane][j]);
      // Every lane shuffles, live or not; the row is uniform in the warp.
      const Words next = shfl_down(y, 1);
      if (r >= R) continue;
      const int ld = lead[k];
      T* row = out + (first + long(r) * C);  // this thread's first output
      // The aligned vector that starts inside this thread's outputs (at
      // V - ld), made whole with the next thread's first V - ld: stored here
      // if it stays in the row. Its first ld elements are this thread's last.
      const bool whole = live && (ld == 0 ? c0 + V <= C : follows && c0 + 2 * V - ld <= C);
      if (whole) {
        *(Words*)(row + (ld ? V - ld : 0)) = ld ? shifted(y, next, (V - ld) * int(sizeof(T))) : y;
      } else if (live) {
        store_elements<T, V>(row, y, ld ? V - ld : 0, min(V, C - c0));
      }
      // This thread's first V - ld outputs belong to the vector the thread
      // before stores, if it stored one that reaches into them.
      const bool before = __shfl_up_sync(0xffffffffu, whole && ld != 0, 1) && lane > 0;
      if (live && ld && !before) {
        store_elements<T, V>(row, y, 0, min(V - ld, C - c0));
      }
    }
  }
}

// V outputs a thread: V = 16 / sizeof(T) reads 16 bytes a row, V = 1 an
// element. `slice` rows a block of a column's slices.
template <class T, int V>
__global__ void __launch_bounds__(32 * kWarps)
    column_sums(float* out, const T* in, int A, int R, int C, int slice) {
  __shared__ float part[kWarps][32][V];
  const int G = (C + V - 1) / V;  // groups of V outputs in a row
  const long groups = long(A) * G;
  const long g = long(blockIdx.x) * 32 + threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int r0 = blockIdx.y * slice, r1 = min(R, r0 + slice);
  float acc[V] = {};
  const bool live = g < groups;
  const long a = live ? g / G : 0;
  const int c0 = live ? int(g % G) * V : 0;
  if (live) {
    const long first = a * long(R) * C + c0;  // element (a, 0, c0)
    if constexpr (V == 1) {
      for (int r = r0 + warp; r < r1; r += kWarps * kUnroll) {
        T x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int rr = r + u * kWarps;
          x[u] = rr < r1 ? in[first + long(rr) * C] : T(0.f);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc[0] += tof(x[u]);
      }
    } else if constexpr (V * sizeof(T) == 4) {
      // A 4-byte word a row: the word around the thread's V elements,
      // shifted by one element with the next where the row starts inside
      // a word.
      for (int r = r0 + warp; r < r1; r += kWarps * kUnroll) {
        Words v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int rr = r + u * kWarps;
          if (rr < r1) {
            const long e = first + long(rr) * C;
            const int lead = int(e % V);
            const std::uint32_t* p = (const std::uint32_t*)(in + (e - lead));
            v[u].w[0] = lead ? __funnelshift_r(p[0], p[1], lead * 8 * int(sizeof(T))) : p[0];
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u * kWarps < r1) {
#pragma unroll
            for (int j = 0; j < V; ++j) acc[j] += element<T>(v[u], j);
          }
        }
      }
    } else {
      for (int r = r0 + warp; r < r1; r += kWarps * kUnroll) {
        Words lo[kUnroll], hi[kUnroll];
        int lead[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int rr = r + u * kWarps;
          lead[u] = 0;
          if (rr < r1) {
            const long e = first + long(rr) * C;
            lead[u] = int(e % V);
            const Words* p = (const Words*)(in + (e - lead[u]));
            lo[u] = p[0];
            if (lead[u]) hi[u] = p[1];
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u * kWarps < r1) {
            const Words v = lead[u] ? shifted(lo[u], hi[u], lead[u] * int(sizeof(T))) : lo[u];
#pragma unroll
            for (int j = 0; j < V; ++j) acc[j] += element<T>(v, j);
          }
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) part[warp][threadIdx.x % 32][j] = acc[j];
  __syncthreads();
  if (warp == 0 && live) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float s = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) s += part[w][threadIdx.x][j];
      if (c0 + j < C) {
        float* o = &out[a * C + c0 + j];
        gridDim.y > 1 ? (void)atomicAdd(o, s) : (void)(*o = s);
      }
    }
  }
}

template <class T, int V>
void time_sums(float* out, const T* in, int A, int R, int C, float copy_us,
               const std::vector<double>& want) {
  const long groups = long(A) * ((C + V - 1) / V);
  const unsigned bx = unsigned((groups + 31) / 32);
  // Slices of the rows: enough blocks for 8 a multiprocessor, but slices of
  // at least kWarps * kUnroll rows.
  int slices = 1;
  while (long(bx) * slices < 132 * 8 && R / (slices * 2) >= kWarps * kUnroll) slices *= 2;
  const int slice = (R + slices - 1) / slices;
  const dim3 grid(bx, unsigned((R + slice - 1) / slice));
  const auto launch = [&] { column_sums<T, V><<<grid, 32 * kWarps>>>(out, in, A, R, C, slice); };
  const float us = median_us(launch);
  const double bad = max_rel_error(launch, out, want);
  printf(
      "  %-9s V=%d  blocks %6u x %3u  %8.2f us  %5.1f%% of a read at copy speed  rel error %.2g\n",
      V == 1               ? "elements"
      : V * sizeof(T) == 4 ? "words"
                           : "shifted",
      V, grid.x, grid.y, us, 100.0 * copy_us / 2 / us, bad);
}

// sum(x, 0) by flat_sums, where A is 1 and C at most kFlatColumns.
template <class T>
void time_flat(float* out, const T* in, int R, int C, float copy_us,
               const std::vector<double>& want) {
  constexpr int V = 16 / sizeof(T);
  const long n = long(R) * C;
  const long period = long(C) / std::gcd(C, V);  // lcm(C, V) / V vectors
  const unsigned blocks = 132 * 8;
  const long stride = long(blocks) * 256 / period * period;
  if (stride == 0) return;
  const auto launch = [&] { flat_sums<T><<<blocks, 256>>>(out, in, n, C, stride); };
  const float us = median_us(launch);
  const double bad = max_rel_error(launch, out, want);
  printf(
      "  %-9s V=%d  period %5ld vectors, %ld threads  %8.2f us  %5.1f%% of a read at copy speed  "
      "rel error %.2g\n",
      "flat", V, period, stride, us, 100.0 * copy_us / 2 / us, bad);
}

// x - mean(x, 1) by column_centre, H rows a thread, timed and checked
// against the mean in double, rounded to T.
template <class T, int V, int H>
void time_centre(T* out, const T* in, int A, int R, int C, float copy_us, const std::vector<T>& h,
                 const std::vector<double>& sums) {
  const long groups = long(A) * ((C + V - 1) / V);
  const unsigned blocks = unsigned((groups + 31) / 32);
  const auto launch = [&] { column_centre<T, V, H><<<blocks, 32 * kWarps>>>(out, in, A, R, C); };
  const float us = median_us(launch);
  const std::size_t n = std::size_t(A) * R * C;
  std::vector<T> got(n);
  CK(cudaMemset(out, 0, n * sizeof(T)));
  launch();
  CK(cudaMemcpy(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
  double bad = 0;
  for (long a = 0; a < A; ++a) {
    for (long r = 0; r < R; ++r) {
      for (long c = 0; c < C; ++c) {
        const std::size_t i = (a * R + r) * C + c;
        const double want = float(T(float(float(h[i]) - sums[a * C + c] / R)));
        bad = std::max(bad, std::abs(double(float(got[i])) - want));
      }
    }
  }
  printf("  x - mean  %-9s V=%d H=%-2d blocks %6u  %8.2f us  %5.1f%% of copy  max error %.3g\n",
         V == 1 ? "elements" : "shifted", V, H, blocks, us, 100.0 * copy_us / us, bad);
}

template <class T, int V>
void time_centre(T* out, const T* in, int A, int R, int C, float copy_us, const std::vector<T>& h,
                 const std::vector<double>& sums) {
  const int rows = (R + kWarps - 1) / kWarps;
  if (rows <= 1) return time_centre<T, V, 1>(out, in, A, R, C, copy_us, h, sums);
  if (rows <= 2) return time_centre<T, V, 2>(out, in, A, R, C, copy_us, h, sums);
  if (rows <= 4) return time_centre<T, V, 4>(out, in, A, R, C, copy_us, h, sums);
  if (rows <= 8) return time_centre<T, V, 8>(out, in, A, R, C, copy_us, h, sums);
  if (rows <= 16) return time_centre<T, V, 16>(out, in, A, R, C, copy_us, h, sums);
}

template <class T>
void run(int A, int R, int C) {
  const SumsCase<T> x(A, R, C, 32);  // a row's last vector may pass the end
  x.print_copy();
  time_sums<T, 1>(x.out, x.in, A, R, C, x.copy_us, x.want);
  if constexpr (sizeof(T) == 2) time_sums<T, 2>(x.out, x.in, A, R, C, x.copy_us, x.want);
  time_sums<T, 16 / sizeof(T)>(x.out, x.in, A, R, C, x.copy_us, x.want);
  if (A == 1 && C <= kFlatColumns) time_flat<T>(x.out, x.in, R, C, x.copy_us, x.want);
  if (R <= kWarps * 16) {
    time_centre<T, 1>(x.copy, x.in, A, R, C, x.copy_us, x.h, x.want);
    time_centre<T, 16 / sizeof(T)>(x.copy, x.in, A, R, C, x.copy_us, x.h, x.want);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto run_any = [](bool half, int A, int R, int C) {
    half ? run<__half>(A, R, C) : run<float>(A, R, C);
  };
  return probe_main3(argc, argv, run_any,
                     {
                         {true, 1, 8, 4194304},   // (8, 4194304) over axis 0
                         {true, 1, 323, 104329},  // (323, 323, 323) over axis 0
                         {true, 323, 323, 323},   // over axis 1
                         {true, 1, 75, 421875},   // (75, 75, 75, 75) over axis 0
                         {true, 75, 75, 5625},    // over axis 1
                         {true, 5625, 75, 75},    // over axis 2
                         {true, 25, 19, 71487},   // (25, 19, 1521, 47) over axis 1
                         {true, 1, 22, 1515294},  // (22, 28061, 54) over axis 0
                         {true, 1, 5793, 5793},   // (5793, 5793) over axis 0
                         {true, 1, 5792, 5792},   // rows on 16 bytes
                         {true, 1, 745925, 45},   // (525, 1421, 45) over axes 0, 1
                         {true, 1, 557375, 60},   // (1715, 325, 60) over axes 0, 1
                         {true, 1, 503964, 67},   // (503964, 67) over axis 0
                         {true, 1, 493652, 68},   // (1478, 334, 68) over axes 0, 1
                         {false, 1, 8, 2097152}, {false, 1, 372962, 45},
                         {false, 1, 75, 223125},  // (75, 223125) over axis 0
                         {false, 75, 75, 2975},   // (75, 75, 2975) over axis 1
                         {false, 1, 255, 65025},  // (255, 255, 255) over axis 0
                         {false, 255, 255, 255},  // over axis 1
                         {false, 1, 4095, 4095},
                     });
}
