// Probe, not a numfuse kernel: x - mean(x, 0) of an R x C array too large
// for L2, cut into panels of columns small enough that a panel's second
// read comes from L2 (bench/probes/l2_reuse.cu: a whole array's does not).
// For each panel, `sums` adds each column's elements (blocks of 256 columns
// by `kChunk` rows, atomically), then `back` writes x - mean over the panel,
// its reads of x served by L2; or the same in one persistent kernel whose
// blocks meet (a grid sync) between each panel's two phases. One panel of
// kernels is today's cut in two; the bound is one read and one write of x.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/l2_panels bench/probes/l2_panels.cu
//   /tmp/l2_panels [f16|f32 R C]
//
// Figures: bench/RESULTS.md, "Panels of columns whose second read comes from L2".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cooperative_groups.h>

#include "probe_util.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kChunk = 64;  // rows a block of `sums` adds

// Column sums of columns [c0, c1), rows [blockIdx.y * kChunk, ...).
template <class T>
__global__ void __launch_bounds__(kThreads)
    sums(float* out, const T* x, int R, int C, int c0, int c1) {
  const int c = c0 + blockIdx.x * kThreads + threadIdx.x;
  if (c >= c1) return;
  const int r0 = blockIdx.y * kChunk, r1 = min(R, r0 + kChunk);
  float s = 0;
#pragma unroll 8
  for (int r = r0; r < r1; ++r) s += tof(x[long(r) * C + c]);
  atomicAdd(&out[c], s);
}

// y = x - sum / R over columns [c0, c1): block (b, r) takes row r's
// columns from c0 + b * 1024, a thread four of them 256 apart.
template <class T>
__global__ void __launch_bounds__(kThreads)
    back(T* y, const T* x, const float* sum, int R, int C, int c0, int c1) {
  const long row = long(blockIdx.y) * C;
  const float inv = 1.f / R;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int c = c0 + blockIdx.x * kThreads * 4 + k * kThreads + threadIdx.x;
    if (c < c1) y[row + c] = fromf<T>(tof(x[row + c]) - sum[c] * inv);
  }
}

// The same in one persistent kernel (a cooperative launch): for each panel,
// every block takes `sums` work, the grid meets, every block takes `back`
// work; a panel's sums go to columns of their own, so the next panel's
// sums need not wait.
template <class T>
__global__ void __launch_bounds__(kThreads)
    persistent(T* y, const T* x, float* sum, int R, int C, int cols) {
  cg::grid_group grid = cg::this_grid();
  const float inv = 1.f / R;
  for (int c0 = 0; c0 < C; c0 += cols) {
    const int c1 = min(C, c0 + cols), tiles = (c1 - c0 + kThreads - 1) / kThreads;
    const int items = tiles * ((R + kChunk - 1) / kChunk);
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
      const int c = c0 + (item % tiles) * kThreads + threadIdx.x;
      const int r0 = (item / tiles) * kChunk, r1 = min(R, r0 + kChunk);
      if (c < c1) {
        float s = 0;
#pragma unroll 8
        for (int r = r0; r < r1; ++r) s += tof(x[long(r) * C + c]);
        atomicAdd(&sum[c], s);
      }
    }
    grid.sync();
    const int blocks = (c1 - c0 + 4 * kThreads - 1) / (4 * kThreads);
    for (long item = blockIdx.x; item < long(blocks) * R; item += gridDim.x) {
      const long row = (item / blocks) * C;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int c = c0 + int(item % blocks) * kThreads * 4 + k * kThreads + threadIdx.x;
        if (c < c1) y[row + c] = fromf<T>(tof(x[row + c]) - sum[c] * inv);
      }
    }
  }
}

template <class T>
void run(int R, int C) {
  const std::size_t n = std::size_t(R) * C, bytes = n * sizeof(T);
  const std::vector<T> h = test_data<T>(n);
  T *x, *y;
  float* sum;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&sum, C * sizeof(float)));
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  const float copy = median_us([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); });
  printf("%s (%d, %d): %.1f MiB, copy %.2f us\n", sizeof(T) == 2 ? "f16" : "f32", R, C,
         bytes / 1048576.0, copy);
  for (double mib : {0.0, 32.0, 24.0, 16.0, 8.0, 4.0}) {
    // Columns a panel, whole array for 0.
    const int cols =
        mib == 0 ? C : std::max(256, int(mib * 1048576 / (double(R) * sizeof(T))) / 8 * 8);
    const int panels = (C + cols - 1) / cols;
    const auto statement = [&] {
      cudaMemsetAsync(sum, 0, C * sizeof(float));
      for (int c0 = 0; c0 < C; c0 += cols) {
        const int c1 = std::min(C, c0 + cols);
        sums<T><<<dim3((c1 - c0 + kThreads - 1) / kThreads, (R + kChunk - 1) / kChunk), kThreads>>>(
            sum, x, R, C, c0, c1);
        back<T><<<dim3((c1 - c0 + 4 * kThreads - 1) / (4 * kThreads), R), kThreads>>>(y, x, sum, R,
                                                                                      C, c0, c1);
      }
    };
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent<T>, kThreads, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int R_ = R, C_ = C, cols_ = cols;
    const auto one_kernel = [&] {
      cudaMemsetAsync(sum, 0, C * sizeof(float));
      void* args[] = {&y, &x, &sum, &R_, &C_, &cols_};
      cudaLaunchCooperativeKernel((void*)persistent<T>, per_sm * sms, kThreads, args);
    };
    for (int kernels = 2; kernels >= 1; --kernels) {
      const auto& launch = kernels == 2 ? std::function<void()>(statement) : one_kernel;
      const float us = median_us(launch);
      CK(cudaMemset(y, 0, bytes));  // the check sees this variant's output
      launch();
      CK(cudaGetLastError());
      std::vector<T> got(n);
      CK(cudaMemcpy(got.data(), y, bytes, cudaMemcpyDeviceToHost));
      double bad = 0;
      for (int c = 0; c < C; c += std::max(1, C / 61)) {
        double m = 0;
        for (int r = 0; r < R; ++r) m += float(h[std::size_t(r) * C + c]);
        m /= R;
        for (int r = 0; r < R; r += std::max(1, R / 67)) {
          const std::size_t i = std::size_t(r) * C + c;
          bad = std::max(bad, std::abs(double(float(got[i])) - (float(h[i]) - m)));
        }
      }
      printf(
          "  %-10s panels of %5d columns (%4.1f MiB) x %3d: %8.2f us  %5.1f%% of copy  max error "
          "%.3g\n",
          kernels == 2 ? "kernels" : "persistent", cols, double(R) * cols * sizeof(T) / 1048576,
          panels, us, 100.0 * copy / us, bad);
    }
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(sum));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4) {
    const int R = atoi(argv[2]), C = atoi(argv[3]);
    argv[1][1] == '1' ? run<__half>(R, C) : run<float>(R, C);
    return 0;
  }
  run<__half>(5793, 5793);
  run<__half>(7294, 4600);
  run<float>(4095, 4095);
  run<float>(4096, 4096);
  run<__half>(11585, 11585);  // 256 MiB
  return 0;
}
