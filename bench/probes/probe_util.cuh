// What the probes of bench/probes share: a check on CUDA calls, conversions
// of 2- and 4-byte elements to float and back, cp.async copies, test data,
// the median time of a launch, cases of column sums and centred
// columns with their references, and a main() over shapes.
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
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

// cp.async (sm_80 on): copies of 4 and 16 bytes into shared memory, a group
// of them committed, and waits for all copies or all groups but the last N.
__device__ __forceinline__ void fetch4(void* s, const void* g) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(g));
}
__device__ __forceinline__ void fetch16(void* s, const void* g) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g));
}
__device__ __forceinline__ void commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void fetched() {
  asm volatile("cp.async.wait_all;\n" ::);
}
template <int N>
__device__ __forceinline__ void all_but_last_arrived() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
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

// x - mean(x, 0) of an R x C array of T: the input (test_data) and an
// output on the device, the time of a copy between them, and each column's
// mean in double.
template <class T>
struct ColumnsCase {
  int R, C;
  std::size_t n, bytes;
  T *in = nullptr, *out = nullptr;
  std::vector<T> h;
  std::vector<double> mean;
  float copy_us = 0;

  ColumnsCase(int rows, int cols)
      : R(rows),
        C(cols),
        n(std::size_t(rows) * cols),
        bytes(n * sizeof(T)),
        h(test_data<T>(n)),
        mean(cols, 0.0) {
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&out, bytes));
    CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    copy_us = median_us([&] { cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); });
    for (std::size_t i = 0; i < n; ++i) mean[i % C] += double(float(h[i])) / R;
  }
  ~ColumnsCase() {
    cudaFree(in);
    cudaFree(out);
  }
  // The output, after the device's work ends.
  std::vector<T> output() const {
    CK(cudaDeviceSynchronize());
    std::vector<T> got(n);
    CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    return got;
  }
  // The largest difference of the output from x - mean(x, 0) rounded to T.
  double max_error() const {
    const std::vector<T> got = output();
    double bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double want = float(T(float(float(h[i]) - mean[i % C])));
      bad = std::max(bad, std::abs(double(float(got[i])) - want));
    }
    return bad;
  }
  void print_copy(const char* name) const {
    printf("%-4s R=%-6d C=%-6d copy %.2f us %.1f GB/s\n", name, R, C, copy_us,
           2.0 * bytes / copy_us / 1e3);
  }
};

// sum(x, 1) of an A x R x C array of T (A = 1: sum(x, 0)): the input
// (test_data, `slack` bytes allocated past its end for reads of a row's last
// vector), a second array of its size, a float output of A x C, the time of
// a copy between the two arrays, and each output's sum in double.
template <class T>
struct SumsCase {
  int A, R, C;
  std::size_t n, bytes;
  std::vector<T> h;
  std::vector<double> want;
  T *in = nullptr, *copy = nullptr;
  float* out = nullptr;
  float copy_us = 0;

  SumsCase(int a, int r, int c, std::size_t slack = 0)
      : A(a),
        R(r),
        C(c),
        n(std::size_t(a) * r * c),
        bytes(n * sizeof(T)),
        h(test_data<T>(n)),
        want(std::size_t(a) * c, 0.0) {
    CK(cudaMalloc(&in, bytes + slack));
    CK(cudaMalloc(&copy, bytes));
    CK(cudaMalloc(&out, want.size() * sizeof(float)));
    CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
    copy_us = median_us([&] { cudaMemcpyAsync(copy, in, bytes, cudaMemcpyDeviceToDevice); });
    for (long i = 0; i < A; ++i) {
      for (long j = 0; j < R; ++j) {
        for (long k = 0; k < C; ++k) want[i * C + k] += float(h[(i * R + j) * C + k]);
      }
    }
  }
  ~SumsCase() {
    cudaFree(in);
    cudaFree(copy);
    cudaFree(out);
  }
  void print_copy() const {
    printf("%s (%d, %d, %d): copy %.2f us\n", sizeof(T) == 2 ? "f16" : "f32", A, R, C, copy_us);
  }
};

// Runs `launch` once into `out`, zeroed first, and returns the largest
// difference of its want.size() floats from `want`, relative to the wanted
// value where that is above 1.
template <class Launch>
double max_rel_error(Launch launch, float* out, const std::vector<double>& want) {
  CK(cudaMemset(out, 0, want.size() * sizeof(float)));
  launch();
  std::vector<float> got(want.size());
  CK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    bad = std::max(bad, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
  }
  return bad;
}

// An R x C array of halves or floats a probe runs on.
struct ProbeShape {
  bool half;
  int R, C;
};

// The shapes the column probes run on unless told one: square halves of
// even and odd width, halves whose rows start on 16 bytes, short columns,
// and floats of even, odd and short columns.
inline const std::initializer_list<ProbeShape> kColumnShapes = {
    {true, 5792, 5792},  {true, 5793, 5793},  {true, 7294, 4600},  {true, 323, 104329},
    {false, 4096, 4096}, {false, 4095, 4095}, {false, 255, 65025},
};

// main() of a probe: `run(half, R, C)` on the shape its command line names
// ("f16|f32 R C"), or else on each of kColumnShapes and `more`.
template <class Run>
int probe_main(int argc, char** argv, Run run, std::initializer_list<ProbeShape> more = {}) {
  if (argc == 4) {
    run(argv[1][1] == '1', atoi(argv[2]), atoi(argv[3]));
    return 0;
  }
  for (const ProbeShape& s : kColumnShapes) run(s.half, s.R, s.C);
  for (const ProbeShape& s : more) run(s.half, s.R, s.C);
  return 0;
}

// An A x R x C array a probe over axis 1 runs on (A = 1: over axis 0).
struct ProbeShape3 {
  bool half;
  int A, R, C;
};

// main() of such a probe: `run(half, A, R, C)` on the shape its command line
// names ("f16|f32 A R C"), or else on each of `shapes`.
template <class Run>
int probe_main3(int argc, char** argv, Run run, std::initializer_list<ProbeShape3> shapes) {
  if (argc == 5) {
    run(argv[1][1] == '1', atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    return 0;
  }
  for (const ProbeShape3& s : shapes) run(s.half, s.A, s.R, s.C);
  return 0;
}
