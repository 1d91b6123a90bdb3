// Layer normalisation of every row of a matrix, in one line of numfuse:
//
//   A = reciprocal(sqrt(var(A, 1) + eps)) * (A - mean(A, 1));
//
// Reductions keep the reduced axis, so mean(A, 1) has shape (rows, 1) and
// broadcasts across each row as written. The result is checked in double.
//
//   layernorm [ROWS COLS]   (8192 x 8192 on a GPU, 1024 x 4096 on the CPU)
#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const bool gpu = nf::default_device().kind == nf::Device::Kind::cuda;
  std::int64_t rows = gpu ? 8192 : 1024, cols = gpu ? 8192 : 4096;
  if (argc == 3) {
    rows = std::atoll(argv[1]);
    cols = std::atoll(argv[2]);
  }
  if (argc != 1 && (argc != 3 || rows < 1 || cols < 2)) {
    std::fprintf(stderr, "usage: layernorm [ROWS COLS]  (ROWS >= 1, COLS >= 2)\n");
    return 2;
  }

  nf::seed(0);
  nf::Array A = nf::randn({rows, cols}) * 3.0 + 5.0;
  float eps = 1e-5f;

  std::printf("device %s, A %s f32\n", nf::to_string(nf::default_device()).c_str(),
              nf::to_string(A.shape()).c_str());
  for (int run = 1; run <= 2; ++run) {  // on a GPU, run 1 also compiles the kernel
    const auto start = std::chrono::steady_clock::now();
    A = reciprocal(sqrt(var(A, 1) + eps)) * (A - mean(A, 1));
    A(0, 0).item<float>();  // reading waits until the device has finished
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    std::printf("run %d: %.2f ms\n", run, ms.count());
  }
  // After `numfuse warmup`, every kernel comes from the disk cache.
  const nf::KernelCacheStats k = nf::kernel_cache_stats();
  std::printf("kernels: %llu compiled by NVRTC (%.0f ms), %llu read from the disk cache\n",
              static_cast<unsigned long long>(k.nvrtc_compiles), k.nvrtc_ms,
              static_cast<unsigned long long>(k.disk_loads));

  const std::vector<float> v = A.to_vector<float>();
  double worst_mean = 0, worst_var = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = v.data() + r * cols;
    double sum = 0, sq = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += row[c];
    const double mean = sum / cols;
    for (std::int64_t c = 0; c < cols; ++c) sq += (row[c] - mean) * (row[c] - mean);
    worst_mean = std::max(worst_mean, std::abs(mean));
    worst_var = std::max(worst_var, std::abs(sq / cols - 1));
  }
  // The output is f32 and eps moves the variance by about 1e-5, so allow 1e-3;
  // a wrong axis or formula is off by O(1).
  const bool ok = worst_mean < 1e-3 && worst_var < 1e-3;
  std::printf("check: max |row mean| = %.1e, max |row variance - 1| = %.1e: %s\n", worst_mean,
              worst_var, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
