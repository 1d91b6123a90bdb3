// What the probes of bench/probes share: a check on CUDA calls, conversions
// of 2- and 4-byte elements to float and back, test data, and the median
// time of a launch.
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

__device__ __forceinline__ float tof(float v) {
  return v;
}
__device__ __forceinline__ float tof(__half v) {
  return __half2float(v);
}
template <class T>
__device__ __forceinline__ T fromf(float v) {
  if constexpr (sizeof(T) == 4) {
    return v;
  } else {
    return __float2half(v);
  }
}

// n elements of 0.00 to 9.99, scattered by a multiplicative hash.
template <class T>
std::vector<T> test_data(std::size_t n) {
  std::vector<T> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = T(float((i * 2654435761u) % 1000) / 100.f);
  return h;
}

// Microseconds a call of `launch`, the median of 7 runs of 20 back-to-back
// calls timed by CUDA events, after 5 calls to warm up.
template <class Launch>
float median_us(Launch launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 5; ++i) launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int rep = 0; rep < 7; ++rep) {
    cudaEventRecord(e0);
    for (int i = 0; i < 20; ++i) launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    ts.push_back(ms * 1000 / 20);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ts.begin(), ts.end());
  return ts[3];
}
