// Probe, not a numfuse kernel: x - mean(x, 0) of an R x C array, any C, in
// three kernels over flat 16-byte vectors. A thread keeps one place p (a
// multiple of V) in a period of L = lcm(C, V) elements (P = L / C rows), so
// that its V lanes keep fixed columns (p + e) % C. `partials`: sums per
// (chunk of periods, place in the period); `finish`: each column's mean
// from its P phases x chunks partials and the fewer than P rows left;
// `back`: x - mean over the same mapping, chunks in reverse order so that
// the first read come back from L2.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_flat bench/probes/columns_flat.cu
//   /tmp/columns_flat [f16|f32 R C]
//
// Figures: bench/RESULTS.md, "Staged rows of 1- and 2-byte columns".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "probe_util.cuh"

template <class T>
struct alignas(16) Vec {
  T v[16 / sizeof(T)];
};

struct Shape {
  long R, C, L, P, T,
      NP;           // rows, columns, period elements and rows, threads a period, whole periods
  int chunks, per;  // chunks of periods, periods a chunk
};

template <class T>
__global__ void __launch_bounds__(256) partials(const T* x, float* W, Shape s) {
  constexpr int V = 16 / sizeof(T);
  const long t = blockIdx.x * 256L + threadIdx.x;
  if (t >= s.T) return;
  const long p = t * V;
  float acc[V] = {};
  const long k0 = (long)blockIdx.y * s.per, k1 = min(s.NP, k0 + s.per);
#pragma unroll 4
  for (long k = k0; k < k1; ++k) {
    const Vec<T> v = *(const Vec<T>*)(x + k * s.L + p);
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] += tof(v.v[e]);
  }
  float* w = W + (long)blockIdx.y * s.L + p;
#pragma unroll
  for (int e = 0; e < V; ++e) w[e] = acc[e];
}

// 32 columns a block; its 8 warps split the chunks x phases partials.
template <class T>
__global__ void __launch_bounds__(256) finish(const T* x, const float* W, float* mean, Shape s) {
  __shared__ float part[8][32];
  const int lane = threadIdx.x % 32, j = threadIdx.x / 32;
  const long c = blockIdx.x * 32L + lane;
  float sum = 0;
  if (c < s.C) {
    const long n = (long)s.chunks * s.P;
    for (long i = j; i < n; i += 8) sum += W[(i / s.P) * s.L + (i % s.P) * s.C + c];
    for (long r = s.NP * s.P + j; r < s.R; r += 8) sum += tof(x[r * s.C + c]);
  }
  part[j][lane] = sum;
  __syncthreads();
  if (j == 0 && c < s.C) {
    for (int k = 1; k < 8; ++k) sum += part[k][lane];
    mean[c] = sum / float(s.R);
  }
}

template <class T>
__global__ void __launch_bounds__(256) back(const T* x, const float* mean, T* y, Shape s) {
  constexpr int V = 16 / sizeof(T);
  const long t = blockIdx.x * 256L + threadIdx.x;
  const long chunk = s.chunks - 1 - blockIdx.y;
  const long k0 = chunk * s.per, k1 = min(s.NP, k0 + s.per);
  if (t < s.T) {
    const long p = t * V;
    float m[V];
#pragma unroll
    for (int e = 0; e < V; ++e) m[e] = mean[(p + e) % s.C];
#pragma unroll 4
    for (long k = k0; k < k1; ++k) {
      const Vec<T> v = *(const Vec<T>*)(x + k * s.L + p);
      Vec<T> o;
#pragma unroll
      for (int e = 0; e < V; ++e) o.v[e] = fromf<T>(tof(v.v[e]) - m[e]);
      *(Vec<T>*)(y + k * s.L + p) = o;
    }
  }
  // The tail rows, by the last chunk's blocks.
  if (chunk == s.chunks - 1) {
    const long first = s.NP * s.L, n = s.R * s.C - first;
    for (long i = t; i < n; i += (long)gridDim.x * 256)
      y[first + i] = fromf<T>(tof(x[first + i]) - mean[(first + i) % s.C]);
  }
}

template <class T>
void run(const char* name, long R, long C) {
  constexpr int V = 16 / sizeof(T);
  Shape s;
  s.R = R;
  s.C = C;
  const long g = std::gcd(C, (long)V);
  s.P = V / g;
  s.L = s.P * C;
  s.T = s.L / V;
  s.NP = R / s.P;
  const long bx = (s.T + 255) / 256;
  s.chunks = int(std::min<long>(s.NP, std::max<long>(1, (132 * 8 + bx - 1) / bx)));
  s.per = int((s.NP + s.chunks - 1) / s.chunks);
  s.chunks = int((s.NP + s.per - 1) / s.per);
  const size_t n = size_t(R) * C, bytes = n * sizeof(T);
  T *x, *y;
  float *W, *mean;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&W, sizeof(float) * s.L * s.chunks));
  CK(cudaMalloc(&mean, sizeof(float) * C));
  const std::vector<T> h = test_data<T>(n);
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  auto all = [&] {
    partials<T><<<dim3(bx, s.chunks), 256>>>(x, W, s);
    finish<T><<<(C + 31) / 32, 256>>>(x, W, mean, s);
    back<T><<<dim3(bx, s.chunks), 256>>>(x, mean, y, s);
  };
  auto sums = [&] { partials<T><<<dim3(bx, s.chunks), 256>>>(x, W, s); };
  const auto time = [](auto launch) { return median_us(launch); };
  const float copy = time([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); });
  const double copy_gbs = 2.0 * bytes / copy / 1e3;
  all();
  CK(cudaDeviceSynchronize());
  // Check against a host reference in double.
  std::vector<double> m(C, 0.0);
  for (long r = 0; r < R; ++r)
    for (long c = 0; c < C; ++c) m[c] += float(h[r * C + c]);
  std::vector<T> got(n);
  CK(cudaMemcpy(got.data(), y, bytes, cudaMemcpyDeviceToHost));
  double bad = 0;
  for (long r = 0; r < R; ++r)
    for (long c = 0; c < C; ++c)
      bad = std::max(
          bad, std::abs(double(float(got[r * C + c])) - (double(float(h[r * C + c])) - m[c] / R)));
  const float us = time(all), us_sums = time(sums);
  printf(
      "%-4s R=%ld C=%ld P=%ld chunks=%d per=%d bx=%ld: x-mean %7.2f us = %5.1f%% of copy (2 "
      "passes), sums %6.2f us (%5.1f%% of copy-read) maxdiff %.3g\n",
      name, R, C, s.P, s.chunks, s.per, bx, us, 100 * 2.0 * bytes / us / 1e3 / copy_gbs, us_sums,
      100 * 1.0 * bytes / us_sums / 1e3 / copy_gbs, bad);
  cudaFree(x);
  cudaFree(y);
  cudaFree(W);
  cudaFree(mean);
}

int main(int argc, char** argv) {
  const auto run_shape = [](bool half, int R, int C) {
    half ? run<__half>("f16", R, C) : run<float>("f32", R, C);
  };
  return probe_main(argc, argv, run_shape,
                    {{true, 104329, 323}, {true, 3580, 2343}, {false, 65025, 255}});
}
