// Probe, not a numfuse kernel: x - mean(x, 1) of an A x R x C array (A = 1:
// x - mean(x, 0)) where a cluster of K blocks holds a strip of W columns of
// all R rows of one a, each block R / K of its rows. A block copies its rows'
// W elements in the 16-byte units that cover them, sums its columns, and the
// blocks of the cluster meet: each adds the K partial sums of every column
// from the others' shared memory, then stores x - mean for its rows. One read
// and one write of x, in runs of W elements, where the strips one block holds
// (columns_strips.cu) are at most some 300 bytes wide for long columns. It
// asks whether a cluster's wider strips reach copy speed, and which engine
// moves the runs best:
//   copy  units: cp.async of 16 bytes, consecutive threads consecutive units
//         bulk:  one cp.async.bulk (the copy engine of sm_90) a row, its
//                units at once, finished on an mbarrier
//   store elements: an element a thread along the rows
//         units:    a 16-byte vector a thread where the unit lies in the
//                   run, its elements one by one where it holds a
//                   neighbouring strip's too
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cluster_strips bench/probes/cluster_strips.cu
//   /tmp/cluster_strips [f16|f32 A R C]
//
// Figures: bench/RESULTS.md ("Strips of columns a cluster holds").
#include <cooperative_groups.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_util.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;

// Shared memory of a block: `rows` rows of U units, each row's lead, and a
// partial sum and a mean a column.
struct Layout {
  int rows, U, W;
  __host__ __device__ std::size_t units_bytes() const { return std::size_t(rows) * U * 16; }
  // The mbarrier of the bulk copies, 8-byte aligned after the means.
  __host__ __device__ std::size_t barrier_at() const {
    return (units_bytes() + rows * 4 + 2 * W * 4 + 7) / 8 * 8;
  }
  __host__ __device__ std::size_t bytes() const { return barrier_at() + 8; }
};

enum class Copy { units, bulk };
enum class Store { elements, units };

// The bulk copy engine (sm_90): a copy of `bytes` (a multiple of 16, both
// addresses on 16 bytes) that counts its bytes off the barrier's expected
// transactions when it lands; a phase of the barrier ends when its one
// arrival has come and every expected byte has landed.
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_address(bar)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
  asm volatile("fence.proxy.async.shared::cta;\n" ::);
}
__device__ __forceinline__ void bulk_fetch(void* s, const void* g, unsigned bytes,
                                           std::uint64_t* bar) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)),
      "r"(bytes));
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(smem_address(s)),
      "l"(g), "r"(bytes), "r"(smem_address(bar))
      : "memory");
}
__device__ __forceinline__ void barrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
__device__ __forceinline__ void barrier_wait(std::uint64_t* bar, unsigned phase) {
  asm volatile(
      "{\n .reg .pred done;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(smem_address(bar)),
      "r"(phase)
      : "memory");
}

template <class T, int K, Copy copy, Store store>
__global__ void __launch_bounds__(kThreads)
    cluster_strips(T* out, const T* in, int R, int C, int W, int tiles) {
  extern __shared__ __align__(16) unsigned char sm[];
  constexpr int V = 16 / sizeof(T);
  cg::cluster_group cluster = cg::this_cluster();
  const int k = int(cluster.block_rank());
  const long strip = blockIdx.x / K;
  const int c0 = int(strip % tiles) * W, c1 = min(C, c0 + W), w = c1 - c0;
  const long base = strip / tiles * long(R) * C + c0;  // element (a, 0, c0)
  const int per = (R + K - 1) / K, r0 = min(R, k * per), nr = min(R, r0 + per) - r0;
  const Layout l{per, W / V + 1, W};
  T* s = (T*)sm;
  int* lead = (int*)(sm + l.units_bytes());
  float* partial = (float*)(lead + per);
  float* mean = partial + W;

  std::uint64_t* bar = (std::uint64_t*)(sm + l.barrier_at());
  if (copy == Copy::bulk) {
    if (threadIdx.x == 0) barrier_init(bar);
    __syncthreads();
    // A row a thread: from the unit its run starts in to the one it ends in.
    for (int rr = threadIdx.x; rr < nr; rr += kThreads) {
      const long e = base + long(r0 + rr) * C;
      const int ld = int(e % V);
      lead[rr] = ld;
      const int units = (ld + w + V - 1) / V;
      bulk_fetch(&s[rr * l.U * V], &in[e - ld], unsigned(units * 16), bar);
    }
  } else {
    // Each row's units, consecutive threads taking consecutive units.
    for (int i = threadIdx.x; i < nr * l.U; i += kThreads) {
      const int rr = i / l.U, u = i % l.U;
      const long e = base + long(r0 + rr) * C;
      const int ld = int(e % V);
      if (u == 0) lead[rr] = ld;
      const long e0 = e - ld + long(u) * V;
      if (e0 < e + w) fetch16(&s[(rr * l.U + u) * V], &in[e0]);
    }
  }
  for (int o = threadIdx.x; o < W; o += kThreads) partial[o] = 0;
  if (copy == Copy::bulk) {
    __syncthreads();  // every row's copy is issued and counted
    if (threadIdx.x == 0) barrier_arrive(bar);
    barrier_wait(bar, 0);
  } else {
    fetched();
  }
  __syncthreads();

  // Column sums of this block's rows: `cols` threads across, `parts` down.
  const int cols = min(W, kThreads), parts = kThreads / cols, p = threadIdx.x / cols;
  for (int o = threadIdx.x % cols; o < w; o += cols) {
    float v = 0;
    for (int rr = p; rr < nr; rr += parts) v += tof(s[rr * l.U * V + lead[rr] + o]);
    if (parts > 1) {
      atomicAdd(&partial[o], v);
    } else {
      partial[o] = v;
    }
  }
  cluster.sync();
  for (int o = threadIdx.x; o < w; o += kThreads) {
    float sum = 0;
    for (int q = 0; q < K; ++q) sum += cluster.map_shared_rank(partial, q)[o];
    mean[o] = sum / R;
  }
  // Every block has read the others' partial sums before any leaves, and
  // this block's means are visible to its threads.
  cluster.sync();

  if (store == Store::units) {
    // A unit a thread; a unit the run shares with its neighbours' strips
    // stores only the run's elements.
    for (int i = threadIdx.x; i < nr * l.U; i += kThreads) {
      const int rr = i / l.U, u = i % l.U;
      const int first = u * V - lead[rr];  // the unit's first column in the strip
      if (first >= w) continue;
      const T* x = &s[(rr * l.U + u) * V];
      T* y = &out[base + long(r0 + rr) * C + first];
      if (first >= 0 && first + V <= w) {
        alignas(16) T v[V];
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = fromf<T>(tof(x[j]) - mean[first + j]);
        *(uint4*)y = *(const uint4*)v;
      } else {
        for (int j = max(0, -first); j < V && first + j < w; ++j) {
          y[j] = fromf<T>(tof(x[j]) - mean[first + j]);
        }
      }
    }
  } else {
    const int shift = __ffs(W) - 1;  // W is a power of 2
    for (int i = threadIdx.x; i < nr * W; i += kThreads) {
      const int rr = i >> shift, o = i & (W - 1);
      if (o < w) {
        out[base + long(r0 + rr) * C + o] = fromf<T>(tof(s[rr * l.U * V + lead[rr] + o]) - mean[o]);
      }
    }
  }
}

// Times the variant, then checks its output against x - mean in double (on
// sampled columns), printed on the same line.
template <class T, int K, Copy copy, Store store, class Check>
void time_strips(T* out, const T* in, int A, int R, int C, int W, float copy_us, Check check) {
  const int tiles = (C + W - 1) / W;
  if (W > 128 && W / 2 >= C) return;  // a narrower strip takes the whole row
  const Layout l{(R + K - 1) / K, W / int(16 / sizeof(T)) + 1, W};
  const std::size_t smem = l.bytes();
  if (smem > 227 * 1024) return;
  const char* name = copy == Copy::bulk
                         ? (store == Store::units ? "bulk/units    " : "bulk/elements ")
                         : (store == Store::units ? "units/units   " : "units/elements");
  auto kernel = cluster_strips<T, K, copy, store>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  if (K > 8) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(long(A) * tiles * K));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = K;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess || clusters == 0) {
    cudaGetLastError();
    printf("  %s K=%-2d W=%-5d smem %6zu: no cluster fits\n", name, K, W, smem);
    return;
  }
  CK(cudaMemset(out, 0, std::size_t(A) * R * C * sizeof(T)));
  const float us = median_us([&] { cudaLaunchKernelEx(&cfg, kernel, out, in, R, C, W, tiles); });
  printf("  %s K=%-2d W=%-5d clusters %7ld (%3d at once) smem %6zu  %8.2f us  %5.1f%% of copy",
         name, K, W, long(A) * tiles, clusters, smem, us, 100.0 * copy_us / us);
  check();
}

template <class T>
void run(int A, int R, int C) {
  const std::size_t n = std::size_t(A) * R * C, bytes = n * sizeof(T);
  const std::vector<T> h = test_data<T>(n);
  T *in, *out;
  CK(cudaMalloc(&in, bytes + 16));  // a row's last unit may pass the end
  CK(cudaMalloc(&out, bytes + 16));
  CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  const float copy = median_us([&] { cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); });
  printf("%s (%d, %d, %d): copy %.2f us\n", sizeof(T) == 2 ? "f16" : "f32", A, R, C, copy);
  const auto check = [&] {
    std::vector<T> got(n);
    CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    double bad = 0;
    for (int a = 0; a < A; a += std::max(1, A / 7)) {
      for (int c = 0; c < C; c += std::max(1, C / 97)) {
        double m = 0;
        for (int r = 0; r < R; ++r) m += float(h[(std::size_t(a) * R + r) * C + c]);
        m /= R;
        for (int r = 0; r < R; ++r) {
          const std::size_t i = (std::size_t(a) * R + r) * C + c;
          bad = std::max(bad, std::abs(double(float(got[i])) - (float(h[i]) - m)));
        }
      }
    }
    printf("  max error %.3g\n", bad);
  };
  for (int W : {128, 256, 512, 1024, 2048, 4096}) {
    time_strips<T, 8, Copy::units, Store::elements>(out, in, A, R, C, W, copy, check);
    time_strips<T, 16, Copy::units, Store::elements>(out, in, A, R, C, W, copy, check);
    time_strips<T, 8, Copy::bulk, Store::elements>(out, in, A, R, C, W, copy, check);
    time_strips<T, 16, Copy::bulk, Store::elements>(out, in, A, R, C, W, copy, check);
    time_strips<T, 8, Copy::units, Store::units>(out, in, A, R, C, W, copy, check);
    time_strips<T, 16, Copy::units, Store::units>(out, in, A, R, C, W, copy, check);
    time_strips<T, 8, Copy::bulk, Store::units>(out, in, A, R, C, W, copy, check);
    time_strips<T, 16, Copy::bulk, Store::units>(out, in, A, R, C, W, copy, check);
  }
  CK(cudaFree(in));
  CK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
  const auto run_any = [](bool half, int A, int R, int C) {
    half ? run<__half>(A, R, C) : run<float>(A, R, C);
  };
  return probe_main3(argc, argv, run_any,
                     {
                         {true, 1, 323, 104329},  // (323, 323, 323) over axis 0
                         {true, 323, 323, 323},   // over axis 1
                         {true, 1, 22, 1515294},  // (22, 28061, 54) over axis 0
                         {true, 75, 75, 5625},    // (75, 75, 75, 75) over axis 1
                         {true, 1, 75, 421875},   // over axis 0
                         {true, 1, 5793, 5793},   // (5793, 5793) over axis 0
                         {true, 1, 7294, 4600},
                         {false, 1, 255, 65025},  // (255, 255, 255) over axis 0
                         {false, 255, 255, 255},  // over axis 1
                         {false, 1, 4095, 4095},
                     });
}
