// Probe, not a numfuse kernel: how a block should copy the columns it holds
// for x - mean(x, 0) of an R x C array. A block takes a tile of W columns
// and an eighth of the rows (the slice, standing in for a cluster's part;
// the mean is the slice's, so only the memory traffic is the real one's),
// copies its elements into shared memory, reduces each column, and writes
// x - mean. Copies: `words`, the 4-byte word around each element, a thread a
// column (numfuse's words); `units`, the 16-byte units that cover each row's
// W elements, staged row by row (numfuse's staged rows); stores an element a
// thread, or (`st`) a unit at a time where the unit lies in the tile.
// `u32c`: u32 with a tile's eight blocks in a cluster that meets through
// distributed shared memory for the whole column's mean, as numfuse's
// shared columns do (not yet run on a GPU).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_staging bench/probes/columns_staging.cu
//   /tmp/columns_staging [f16|f32 R C]
//
// Figures: bench/RESULTS.md, "Staged rows of 1- and 2-byte columns".
#include <cooperative_groups.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "probe_util.cuh"

constexpr int S = 8;  // slices of rows

// Column sums of threads tr (0..TR-1) sharing column o, through smem.
template <int W>
__device__ float column_allreduce(float v, float* red) {
  constexpr int TR = 256 / W;
  const int o = threadIdx.x % W, tr = threadIdx.x / W;
  red[tr * W + o] = v;
  __syncthreads();
  float s = 0;
  for (int t = 0; t < TR; ++t) s += red[t * W + o];
  __syncthreads();
  return s;
}

// Words: thread (o, tr) copies the word around each element of its column.
template <class T, int W>
__global__ void __launch_bounds__(256) words(T* out, const T* in, int R, int C) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[256];
  constexpr int TR = 256 / W;
  const int rows = (R + S - 1) / S, r0 = blockIdx.y * rows, r1 = min(R, r0 + rows);
  const int o = threadIdx.x % W, tr = threadIdx.x / W, c = blockIdx.x * W + o;
  const bool live = c < C;
  unsigned* s = (unsigned*)sm;
  const int per = (rows + TR - 1) / TR;
  for (int k = 0; k < per; ++k) {
    const int r = r0 + tr + k * TR;
    if (live && r < r1) {
      const T* p = &in[(long)r * C + c];
      fetch4(&s[k * 256 + threadIdx.x], (const void*)((uintptr_t)p & ~uintptr_t(3)));
    }
  }
  fetched();
  auto at = [&](int k, int r) {
    const T* p = &in[(long)r * C + c];
    const unsigned w = s[k * 256 + threadIdx.x];
    T v;
    if (sizeof(T) == 4) {
      memcpy(&v, &w, 4);
    } else {
      const unsigned short h = ((uintptr_t)p & 2) ? (w >> 16) : (w & 0xffff);
      memcpy(&v, &h, 2);
    }
    return tof(v);
  };
  float sum = 0;
  for (int k = 0; k < per; ++k) {
    const int r = r0 + tr + k * TR;
    if (live && r < r1) sum += at(k, r);
  }
  const float mean = column_allreduce<W>(sum, red) / float(r1 - r0);
  for (int k = 0; k < per; ++k) {
    const int r = r0 + tr + k * TR;
    if (live && r < r1) out[(long)r * C + c] = fromf<T>(at(k, r) - mean);
  }
}

// 16-byte units covering each row's W columns, staged row-major; column
// threads reduce; stores scalar (UNITS false) or by units (UNITS true).
// CLUSTER: the S blocks of a tile are a cluster that meets through
// distributed shared memory, as numfuse's shared columns do, and the mean is
// the whole column's.
template <class T, int W, bool UNITS, bool CLUSTER = false>
__global__ void __launch_bounds__(256) units(T* out, const T* in, int R, int C) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[256];
  __shared__ float means[W];
  constexpr int TR = 256 / W;
  constexpr int U = W * sizeof(T) / 16 + 1;  // units a row, at most
  constexpr int P = U * 16;                  // bytes a staged row
  const int rows = (R + S - 1) / S, r0 = blockIdx.y * rows, r1 = min(R, r0 + rows);
  const int c0 = blockIdx.x * W, wc = min(W, C - c0);
  const int nrows = r1 - r0;
  for (int idx = threadIdx.x; idx < nrows * U; idx += 256) {
    const int i = idx / U, u = idx % U;
    const uintptr_t g = (uintptr_t)&in[(long)(r0 + i) * C + c0];
    const uintptr_t a = g & ~uintptr_t(15);
    const int need = int((g - a) + wc * sizeof(T) + 15) / 16;
    if (u < need) fetch16(sm + i * P + u * 16, (const void*)(a + u * 16));
  }
  fetched();
  __syncthreads();
  const int o = threadIdx.x % W, tr = threadIdx.x / W;
  const bool live = o < wc;
  auto shift = [&](int i) { return int((uintptr_t)&in[(long)(r0 + i) * C + c0] & 15); };
  float sum = 0;
  for (int i = tr; i < nrows; i += TR) {
    if (live) sum += tof(*(const T*)(sm + i * P + shift(i) + o * sizeof(T)));
  }
  float mean = column_allreduce<W>(sum, red) / float(nrows);
  if (CLUSTER) {
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    if (tr == 0) means[o] = mean * float(nrows);
    cluster.sync();
    float total = 0;
    for (unsigned b = 0; b < S; ++b) total += cluster.map_shared_rank(means, b)[o];
    cluster.sync();
    mean = total / float(R);
  }
  if (!UNITS) {
    for (int i = tr; i < nrows; i += TR) {
      if (live) {
        out[(long)(r0 + i) * C + c0 + o] =
            fromf<T>(tof(*(const T*)(sm + i * P + shift(i) + o * sizeof(T))) - mean);
      }
    }
    return;
  }
  if (tr == 0) means[o] = mean;
  __syncthreads();
  // Units: each thread its units, the results computed and stored a unit at
  // a time where the unit lies wholly in the tile, else an element at a time.
  constexpr int E = 16 / sizeof(T);
  for (int idx = threadIdx.x; idx < nrows * U; idx += 256) {
    const int i = idx / U, u = idx % U;
    const uintptr_t g = (uintptr_t)&in[(long)(r0 + i) * C + c0];
    const uintptr_t a = g & ~uintptr_t(15);
    const int sh = int(g - a) / int(sizeof(T));  // elements before column c0
    const int first = u * E - sh;                // column offset of lane 0
    if (first >= wc || first + E <= 0) continue;
    const T* src = (const T*)(sm + i * P + u * 16);
    T* dst = (T*)((uintptr_t)&out[(long)(r0 + i) * C + c0] - (g - a)) + u * E;
    if (first >= 0 && first + E <= wc) {
      alignas(16) T v[E];
#pragma unroll
      for (int e = 0; e < E; ++e) v[e] = fromf<T>(tof(src[e]) - means[first + e]);
      *(uint4*)dst = *(uint4*)v;
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int col = first + e;
        if (col >= 0 && col < wc) dst[e] = fromf<T>(tof(src[e]) - means[col]);
      }
    }
  }
}

template <class T>
void run(const char* name, int R, int C) {
  ColumnsCase<T> x(R, C);
  T* const out = x.out;
  const T* const in = x.in;
  // The slice kernels against words32's output (each slice's own mean); the
  // cluster against the whole column's mean.
  std::vector<T> ref;
  auto report = [&](const char* v, auto launch) {
    launch();
    double err = 0;
    if (ref.empty()) {
      err = x.max_error();
    } else {
      const std::vector<T> got = x.output();
      for (std::size_t i = 0; i < x.n; ++i)
        err = std::max(err, std::abs(double(float(got[i])) - double(float(ref[i]))));
    }
    const float us = median_us(launch);
    printf("%-6s %-10s R=%d C=%d %8.2f us %7.1f GB/s %5.1f%% of copy  maxdiff %.3g\n", name, v, R,
           C, us, 2.0 * x.bytes / us / 1e3, 100 * x.copy_us / us, err);
  };
  const int rows = (R + S - 1) / S;
  {
    constexpr int W = 32;
    const size_t sm = size_t((rows + 256 / W - 1) / (256 / W)) * 256 * 4;
    CK(cudaFuncSetAttribute(words<T, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
    auto l = [&] { words<T, W><<<dim3((C + W - 1) / W, S), 256, sm>>>(out, in, R, C); };
    l();
    ref = x.output();
    report("words32", l);
  }
  auto unit = [&](auto w, auto st, const char* v) {
    constexpr int W = decltype(w)::value;
    constexpr bool ST = decltype(st)::value;
    const size_t sm = size_t(rows) * (W * sizeof(T) / 16 + 1) * 16;
    CK(cudaFuncSetAttribute(units<T, W, ST>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
    report(v, [&] { units<T, W, ST><<<dim3((C + W - 1) / W, S), 256, sm>>>(out, in, R, C); });
  };
  using F = std::false_type;
  using Tt = std::true_type;
  unit(std::integral_constant<int, 32>{}, F{}, "u32");
  unit(std::integral_constant<int, 32>{}, Tt{}, "u32st");
  unit(std::integral_constant<int, 64>{}, F{}, "u64");
  unit(std::integral_constant<int, 64>{}, Tt{}, "u64st");
  if (sizeof(T) == 2 && rows <= 725) unit(std::integral_constant<int, 128>{}, Tt{}, "u128st");
  ref.clear();
  {
    constexpr int W = 32;
    const size_t sm = size_t(rows) * (W * sizeof(T) / 16 + 1) * 16;
    const auto kernel = units<T, W, false, true>;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((C + W - 1) / W, S);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = sm;
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1;
    cluster.val.clusterDim.y = S;
    cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
    report("u32c", [&] { cudaLaunchKernelEx(&cfg, kernel, out, in, R, C); });
  }
  x.print_copy(name);
}

int main(int argc, char** argv) {
  const auto run_shape = [](bool half, int R, int C) {
    half ? run<__half>("f16", R, C) : run<float>("f32", R, C);
  };
  return probe_main(argc, argv, run_shape);
}
