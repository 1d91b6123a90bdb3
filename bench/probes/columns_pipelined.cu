// Probe, not a numfuse kernel: x - mean(x, 0) of an R x C array by clusters
// that stay resident and take strips of W columns one after another. A
// cluster's S blocks each hold a slice of the strip's rows in shared memory
// (the 16-byte units that cover each row's W elements, as numfuse's staged
// rows); the next strip's units are copied in while this strip's column sums
// meet through distributed shared memory and its results are stored, so the
// copies never wait on the meeting. Against `u32c` of columns_staging.cu
// (one strip a cluster, a cluster a strip), which stops copying while it meets.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_pipelined bench/probes/columns_pipelined.cu
//   /tmp/columns_pipelined [f16|f32 R C]
//
// Figures: bench/RESULTS.md, "Resident clusters over strips of columns".
#include <cooperative_groups.h>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_util.cuh"

namespace cg = cooperative_groups;

template <class T, int W, int S>
__global__ void __launch_bounds__(256) pipelined(T* out, const T* in, int R, int C) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[256];
  __shared__ float sums[2][W];
  __shared__ float means[W];
  constexpr int TR = 256 / W;                // threads a column
  constexpr int U = W * sizeof(T) / 16 + 1;  // units a row, at most
  constexpr int P = U * 16;                  // bytes a staged row
  constexpr int E = 16 / sizeof(T);          // elements a unit
  const cg::cluster_group cluster = cg::this_cluster();
  const int rows = (R + S - 1) / S, r0 = int(cluster.block_rank()) * rows;
  const int nrows = max(0, min(R, r0 + rows) - r0);
  const int strips = (C + W - 1) / W, first = blockIdx.x / S, step = gridDim.x / S;
  const std::size_t buffer = std::size_t(rows) * P;
  const int o = threadIdx.x % W, tr = threadIdx.x / W;
  // Address of row i's element of column c0, and its distance past a unit.
  auto at = [&](int i, int c0) { return (uintptr_t)&in[(long)(r0 + i) * C + c0]; };
  auto load = [&](int strip, unsigned char* b) {
    const int c0 = strip * W, wc = min(W, C - c0);
    for (int idx = threadIdx.x; idx < nrows * U; idx += 256) {
      const int i = idx / U, u = idx % U;
      const uintptr_t g = at(i, c0), a = g & ~uintptr_t(15);
      if (u < int((g - a) + wc * sizeof(T) + 15) / 16)
        fetch16(b + i * P + u * 16, (const void*)(a + u * 16));
    }
    commit();
  };
  if (first < strips) load(first, sm);
  int k = 0;
  for (int s = first; s < strips; s += step, ++k) {
    unsigned char* cur = sm + (k & 1) * buffer;
    // Every thread is done with the other buffer before copies overwrite it.
    __syncthreads();
    if (s + step < strips) {
      load(s + step, sm + ((k + 1) & 1) * buffer);
    } else {
      commit();
    }
    all_but_last_arrived<1>();  // this strip's copies are in; the next strip's may not be
    __syncthreads();
    const int c0 = s * W, wc = min(W, C - c0);
    const bool live = o < wc;
    float sum = 0;
    for (int i = tr; i < nrows; i += TR) {
      if (live) sum += tof(*(const T*)(cur + i * P + (at(i, c0) & 15) + o * sizeof(T)));
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    if (tr == 0) {
      float t = 0;
      for (int j = 0; j < TR; ++j) t += red[j * W + o];
      sums[k & 1][o] = t;
    }
    // The other blocks' sums of this strip; double-buffered, so one meeting
    // a strip keeps a block from overwriting sums another still reads.
    cluster.sync();
    if (tr == 0) {
      float t = 0;
      for (unsigned b = 0; b < S; ++b) t += cluster.map_shared_rank(sums[k & 1], b)[o];
      means[o] = t / float(R);
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < nrows * U; idx += 256) {
      const int i = idx / U, u = idx % U;
      const uintptr_t g = at(i, c0), a = g & ~uintptr_t(15);
      const int lane0 = u * E - int(g - a) / int(sizeof(T));  // column offset of lane 0
      if (lane0 >= wc || lane0 + E <= 0) continue;
      const T* src = (const T*)(cur + i * P + u * 16);
      T* dst = (T*)((uintptr_t)&out[(long)(r0 + i) * C + c0] - (g - a)) + u * E;
      if (lane0 >= 0 && lane0 + E <= wc) {
        alignas(16) T v[E];
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = fromf<T>(tof(src[e]) - means[lane0 + e]);
        *(uint4*)dst = *(uint4*)v;
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const int col = lane0 + e;
          if (col >= 0 && col < wc) dst[e] = fromf<T>(tof(src[e]) - means[col]);
        }
      }
    }
  }
  // No block leaves while another may still read its sums.
  cluster.sync();
}

template <class T>
void run(const char* name, int R, int C) {
  ColumnsCase<T> x(R, C);
  auto variant = [&](auto w, auto s, int waves) {
    constexpr int W = decltype(w)::value, S = decltype(s)::value;
    const auto kernel = pipelined<T, W, S>;
    const size_t sm = 2 * size_t((R + S - 1) / S) * (W * sizeof(T) / 16 + 1) * 16;
    if (sm > 227 * 1024) return;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
    if (S > 8) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = sm;
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = S;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(S);
    int resident = 0;
    CK(cudaOccupancyMaxActiveClusters(&resident, kernel, &cfg));
    const int strips = (C + W - 1) / W;
    const int clusters = waves == 0 ? strips : std::min(strips, waves * resident);
    cfg.gridDim = dim3(clusters * S);
    auto launch = [&] { cudaLaunchKernelEx(&cfg, kernel, x.out, (const T*)x.in, R, C); };
    launch();
    const double bad = x.max_error();
    const float us = median_us(launch);
    printf(
        "%-4s R=%-6d C=%-6d W=%-3d S=%-2d clusters %4d (%d resident) %8.2f us %5.1f%% of copy"
        "  maxdiff %.3g\n",
        name, R, C, W, S, clusters, resident, us, 100 * x.copy_us / us, bad);
  };
  using W32 = std::integral_constant<int, 32>;
  using W64 = std::integral_constant<int, 64>;
  using S8 = std::integral_constant<int, 8>;
  using S16 = std::integral_constant<int, 16>;
  for (int waves : {1, 2, 0}) {
    variant(W32{}, S8{}, waves);
    variant(W32{}, S16{}, waves);
    variant(W64{}, S8{}, waves);
    variant(W64{}, S16{}, waves);
  }
  x.print_copy(name);
}

int main(int argc, char** argv) {
  const auto run_shape = [](bool half, int R, int C) {
    half ? run<__half>("f16", R, C) : run<float>("f32", R, C);
  };
  return probe_main(argc, argv, run_shape);
}
