// Probe, not a numfuse kernel: how much of a second pass over an array
// larger than L2 comes back from L2, as in a reduction broadcast back cut in
// two (a reduction kernel, then `y = x - m` over the same x). `first` sums
// x's chunks, forward or in reverse chunk order (the last read at x's
// start); `second` reads x forward and writes y. Variants change the cache
// hints of the two: default, y stored streaming (st.global.cs), the first's
// loads marked L2::evict_last with the second's loads L2::evict_first, and
// both. Each prints the time of `first; second` against each alone.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/l2_reuse bench/probes/l2_reuse.cu
//   /tmp/l2_reuse [MiB ...]
//
// Figures: bench/RESULTS.md, "A second pass from L2".
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_util.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kVectorsPerThread = 8;  // 16-byte vectors of a thread in a chunk
constexpr long kChunk = long(kThreads) * kVectorsPerThread;

__device__ __forceinline__ unsigned long long policy_evict_last() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long policy_evict_first() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint4 load(const uint4* p, bool hinted, unsigned long long policy) {
  uint4 v;
  if (hinted) {
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  } else {
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  }
  return v;
}
__device__ __forceinline__ void store(uint4* p, uint4 v, bool streaming) {
  if (streaming) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
  } else {
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
  }
}

// Block b sums chunk b (reverse: chunk gridDim.x - 1 - b) of x, as halves.
__global__ void first(const uint4* x, float* sums, bool reverse, bool keep) {
  const long c = reverse ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const unsigned long long policy = policy_evict_last();
  uint4 v[kVectorsPerThread];
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    v[k] = load(x + c * kChunk + k * kThreads + threadIdx.x, keep, policy);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    const __half2* h = reinterpret_cast<const __half2*>(&v[k]);
    for (int e = 0; e < 4; ++e) s += __low2float(h[e]) + __high2float(h[e]);
  }
  if (s == -1.f) sums[c] = s;  // never: keeps the loads
}

// Block b writes chunk b of y = x - 1.
__global__ void second(const uint4* x, uint4* y, bool demote, bool streaming) {
  const long c = blockIdx.x;
  const unsigned long long policy = policy_evict_first();
  uint4 v[kVectorsPerThread];
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    v[k] = load(x + c * kChunk + k * kThreads + threadIdx.x, demote, policy);
  }
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    __half2* h = reinterpret_cast<__half2*>(&v[k]);
    for (int e = 0; e < 4; ++e) h[e] = __hsub2(h[e], __float2half2_rn(1.f));
    store(y + c * kChunk + k * kThreads + threadIdx.x, v[k], streaming);
  }
}

struct Variant {
  const char* name;
  bool reverse, keep, demote, streaming;
};

void run(long mib) {
  const long chunks = mib * 1024 * 1024 / (kChunk * 16);
  const long bytes = chunks * kChunk * 16;
  uint4 *x, *y;
  float* sums;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&sums, chunks * sizeof(float)));
  CK(cudaMemset(x, 0x3c, bytes));
  const float copy = median_us([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); });
  printf("%ld MiB: copy %.2f us (%.0f GB/s)\n", mib, copy, 2.0 * bytes / copy / 1e3);
  const Variant variants[] = {
      {"forward", false, false, false, false},
      {"reverse", true, false, false, false},
      {"reverse, y streaming", true, false, false, true},
      {"reverse, x kept then demoted", true, true, true, false},
      {"reverse, x kept, demoted, y streaming", true, true, true, true},
  };
  for (const Variant& v : variants) {
    const int g = int(chunks);
    const float a = median_us([&] { first<<<g, kThreads>>>(x, sums, v.reverse, v.keep); });
    const float b = median_us([&] { second<<<g, kThreads>>>(x, y, v.demote, v.streaming); });
    const float ab = median_us([&] {
      first<<<g, kThreads>>>(x, sums, v.reverse, v.keep);
      second<<<g, kThreads>>>(x, y, v.demote, v.streaming);
    });
    // The bound of one read and one write, against the two passes' time.
    printf(
        "  %-40s first %7.2f  second %7.2f  both %7.2f us  saved %5.1f%%  of one-read bound "
        "%5.1f%%\n",
        v.name, a, b, ab, 100.0 * (a + b - ab) / (a + b), 100.0 * copy / ab);
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(sums));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes = {32, 64, 128};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; ++i) sizes.push_back(atol(argv[i]));
  }
  for (long mib : sizes) run(mib);
  return 0;
}
