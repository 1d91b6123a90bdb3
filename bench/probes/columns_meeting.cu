// Probe, not a numfuse kernel: x - mean(x, 0) of an R x C array where the
// blocks that hold a strip of W columns meet through global memory instead of
// a cluster's distributed shared memory. A strip's rows are cut into S slices,
// a block a slice (the 16-byte units that cover each row's W elements, staged
// in shared memory); each block writes its column sums to global memory,
// counts itself in, waits until the strip's S blocks have, adds their sums in
// slice order and stores x - mean. The grid is launched cooperatively (every
// block resident at once), each block taking items b, b + B, ... with B a
// multiple of S, so that a strip's S slices are taken in the same round and
// no block waits on one that cannot run. S is free of a cluster's limit of
// 8 (16) blocks on one GPC.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_meeting bench/probes/columns_meeting.cu
//   /tmp/columns_meeting [f16|f32 R C]
//
// Figures: bench/RESULTS.md, "Blocks of a strip meeting through global memory".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_util.cuh"

__device__ __forceinline__ unsigned acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <class T, int W>
__global__ void __launch_bounds__(256)
    meeting(T* out, const T* in, int R, int C, int S, float* partials, unsigned* arrived,
            unsigned launch) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[256];
  __shared__ float means[W];
  constexpr int TR = 256 / W;                // threads a column
  constexpr int U = W * sizeof(T) / 16 + 1;  // units a row, at most
  constexpr int P = U * 16;                  // bytes a staged row
  const int rows = (R + S - 1) / S, items = (C + W - 1) / W * S;
  const int o = threadIdx.x % W, tr = threadIdx.x / W;
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    const int strip = item / S, slice = item % S;
    const int r0 = slice * rows, nrows = max(0, min(R, r0 + rows) - r0);
    const int c0 = strip * W, wc = min(W, C - c0);
    auto at = [&](int i) { return (uintptr_t)&in[(long)(r0 + i) * C + c0]; };
    for (int idx = threadIdx.x; idx < nrows * U; idx += 256) {
      const int i = idx / U, u = idx % U;
      const uintptr_t g = at(i), a = g & ~uintptr_t(15);
      if (u < int((g - a) + wc * sizeof(T) + 15) / 16)
        fetch16(sm + i * P + u * 16, (const void*)(a + u * 16));
    }
    fetched();
    __syncthreads();
    const bool live = o < wc;
    auto element = [&](int i) {
      return tof(*(const T*)(sm + i * P + (at(i) & 15) + o * sizeof(T)));
    };
    float sum = 0;
    for (int i = tr; i < nrows; i += TR) {
      if (live) sum += element(i);
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    if (tr == 0) {
      float t = 0;
      for (int j = 0; j < TR; ++j) t += red[j * W + o];
      partials[(long(strip) * S + slice) * W + o] = t;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(&arrived[strip], 1u);
      while (acquire(&arrived[strip]) < launch * unsigned(S)) {
      }
    }
    __syncthreads();
    if (tr == 0) {
      float t = 0;
      for (int q = 0; q < S; ++q) t += __ldcg(&partials[(long(strip) * S + q) * W + o]);
      means[o] = t / float(R);
    }
    __syncthreads();
    for (int i = tr; i < nrows; i += TR) {
      if (live) out[(long)(r0 + i) * C + c0 + o] = fromf<T>(element(i) - means[o]);
    }
    // Every thread is done with this slice before the next one's copies land.
    __syncthreads();
  }
}

template <class T>
void run(const char* name, int R, int C) {
  ColumnsCase<T> x(R, C);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto variant = [&](auto w, int S) {
    constexpr int W = decltype(w)::value;
    const auto kernel = meeting<T, W>;
    const int rows = (R + S - 1) / S, strips = (C + W - 1) / W;
    const size_t sm = size_t(rows) * (W * sizeof(T) / 16 + 1) * 16;
    if (sm > 225 * 1024 || S > R) return;  // leaves room for the static arrays
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, sm));
    const int blocks = std::min(strips * S, per_sm * sms / S * S);
    float* partials;
    unsigned* arrived;
    CK(cudaMalloc(&partials, size_t(strips) * S * W * sizeof(float)));
    CK(cudaMalloc(&arrived, strips * sizeof(unsigned)));
    CK(cudaMemset(arrived, 0, strips * sizeof(unsigned)));
    unsigned launches = 0;
    auto launch = [&] {
      ++launches;
      void* args[] = {&x.out, &x.in, (void*)&R, (void*)&C, &S, &partials, &arrived, &launches};
      CK(cudaLaunchCooperativeKernel((const void*)kernel, blocks, 256, args, sm));
    };
    launch();
    const double bad = x.max_error();
    const float us = median_us(launch);
    printf(
        "%-4s R=%-6d C=%-6d W=%-3d S=%-3d %3d KB a block, %d an SM, %5d blocks %8.2f us "
        "%5.1f%% of copy  maxdiff %.3g\n",
        name, R, C, W, S, int(sm / 1024), per_sm, blocks, us, 100 * x.copy_us / us, bad);
    cudaFree(partials);
    cudaFree(arrived);
  };
  for (int S : {1, 2, 4, 8, 16, 32, 64}) {
    variant(std::integral_constant<int, 32>{}, S);
    variant(std::integral_constant<int, 64>{}, S);
  }
  x.print_copy(name);
}

int main(int argc, char** argv) {
  const auto run_shape = [](bool half, int R, int C) {
    half ? run<__half>("f16", R, C) : run<float>("f32", R, C);
  };
  return probe_main(argc, argv, run_shape);
}
