// The quadratic forms r_i = x_iᵀ A x_i of many vectors x_i (the rows of X)
// with one matrix A, in one line of numfuse:
//
//   r = sum(dot(X, A) * X, 1);
//
// One product (X A) and one fused kernel that multiplies it by X and sums
// each row, so the products x_iᵀ A are never read back separately; the sum
// keeps its axis, so r has shape (N, 1). Timed on the GPU (when
// nf::default_device() is one) and on the CPU backend.
//
//   inner_products           50,000 vectors of length 1,000
//   inner_products --quick   500 vectors of length 64, checked against a
//                            float64 reference on the host; exits 1 on a mismatch
#include <numfuse/numfuse.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "timing.hpp"

namespace {

// f32's unit roundoff.
constexpr double kU = 0x1p-24;

// The number of r's elements farther from the f64 reference than f32 allows:
// the product's error is at most L·u·Σ_l|x_il a_lj| and the row sum's
// (L+1)·u times its terms' sum, so each r_i is within (2L+2)·u·Σ_jl|x_il a_lj x_ij|
// whatever order the sums take.
std::int64_t wrong_elements(const std::vector<float>& r, const std::vector<float>& x,
                            const std::vector<float>& a, std::int64_t n, std::int64_t len) {
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* xi = x.data() + i * len;
    double value = 0, bound = 0;
    for (std::int64_t j = 0; j < len; ++j) {
      double y = 0, y_abs = 0;
      for (std::int64_t l = 0; l < len; ++l) {
        y += double(xi[l]) * a[l * len + j];
        y_abs += std::abs(double(xi[l]) * a[l * len + j]);
      }
      value += y * xi[j];
      bound += y_abs * std::abs(xi[j]);
    }
    wrong += !(std::abs(r[i] - value) <= double(2 * len + 2) * kU * bound);
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc == 2 && std::string(argv[1]) == "--quick";
  if (argc > 2 || (argc == 2 && !quick)) {
    std::fprintf(stderr, "usage: inner_products [--quick]\n");
    return 2;
  }
  const std::int64_t n = quick ? 500 : 50000, len = quick ? 64 : 1000;
  std::printf("r = sum(dot(X, A) * X, 1): X %lldx%lld, A %lldx%lld, f32%s\n", (long long)n,
              (long long)len, (long long)len, (long long)len,
              quick ? " (--quick: checked, times not meaningful)" : "");
  nf::seed(0);
  const nf::Array X = nf::randn({n, len}), A = nf::randn({len, len});
  const std::vector<float> host_x = quick ? X.to_vector<float>() : std::vector<float>{};
  const std::vector<float> host_a = quick ? A.to_vector<float>() : std::vector<float>{};

  std::optional<double> gpu_ms;
  double cpu_ms = 0;
  bool ok = true;
  for (nf::Device dev : example::devices()) {
    const nf::Array x = example::on(X, dev), a = example::on(A, dev);
    nf::Array r;
    const double ms = example::median_ms([&] { return r = nf::sum(nf::dot(x, a) * x, 1); },
                                         quick || dev.kind == nf::Device::Kind::cuda ? 10 : 3);
    std::printf("  %-7s %10.2f ms\n", nf::to_string(dev).c_str(), ms);
    if (dev.kind == nf::Device::Kind::cuda) gpu_ms = ms;
    if (dev.kind == nf::Device::Kind::cpu) cpu_ms = ms;
    if (!quick) continue;
    const std::int64_t wrong = wrong_elements(r.to_vector<float>(), host_x, host_a, n, len);
    std::printf("  check on %s: %s (%lld of %lld elements outside the bound)\n",
                nf::to_string(dev).c_str(), wrong ? "WRONG" : "ok", (long long)wrong, (long long)n);
    ok &= wrong == 0;
  }
  if (gpu_ms) std::printf("  GPU vs CPU backend: %.1fx\n", cpu_ms / *gpu_ms);
  return ok ? 0 : 1;
}
