// How much faster numfuse's GPU runs two workloads of its ancestors than
// numpy and than numfuse's own CPU backend:
//  - cudamat's benchmark, a 2000x40000 . 40000x2000 f32 product: C = dot(A, B);
//  - the seed thread's RBM step, hidden states sampled from visible ones:
//      H = astype(rand({m, n}) < sigmoid(dot(A, B) + c), f32);
//    A (4096x2048) the weights, B (2048x256) a batch of visible vectors, c a
//    column of hidden biases. One statement: a product and one fused kernel.
// Each is timed on the GPU (when nf::default_device() is one), on the CPU
// backend, and in numpy (f32) where python3 imports it.
//
//   gemm_speedup           full sizes (without a GPU: the CPU backend and numpy only)
//   gemm_speedup --quick   small sizes, results checked against a float64
//                          reference on the host; exits 1 on a mismatch
#include <numfuse/numfuse.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "timing.hpp"

namespace {

struct Dims {
  std::int64_t m, k, n;
};

// f32's unit roundoff.
constexpr double kU = 0x1p-24;

// The f64 product of row-major host matrices, and for each element the bound
// k·u·Σ|a||b| on an f32 product's error, whatever order its sums take.
struct Reference {
  std::vector<double> value, bound;
};
Reference host_dot(const std::vector<float>& a, const std::vector<float>& b, const Dims& d) {
  Reference r{std::vector<double>(d.m * d.n), std::vector<double>(d.m * d.n)};
  for (std::int64_t i = 0; i < d.m; ++i) {
    for (std::int64_t l = 0; l < d.k; ++l) {
      const double x = a[i * d.k + l];
      for (std::int64_t j = 0; j < d.n; ++j) {
        r.value[i * d.n + j] += x * b[l * d.n + j];
        r.bound[i * d.n + j] += std::abs(x * b[l * d.n + j]);
      }
    }
  }
  for (double& e : r.bound) e *= double(d.k) * kU;
  return r;
}

bool check(const char* what, nf::Device d, std::int64_t wrong, std::int64_t of) {
  std::printf("  check on %s: %s %s (%lld of %lld elements outside the bound)\n",
              nf::to_string(d).c_str(), what, wrong ? "WRONG" : "ok", (long long)wrong,
              (long long)of);
  return wrong == 0;
}

// numpy's milliseconds per call of `statement` on f32 inputs a (m x k), b
// (k x n) and c (m x 1) of its own (the time does not depend on the values):
// a warm-up, then the median of 3 calls. None where python3 lacks numpy.
std::optional<double> numpy_ms(const std::string& statement, const Dims& d) {
  const std::string script =
      "import time, numpy as np\n"
      "rng = np.random.default_rng(0)\n"
      "m, k, n = " +
      std::to_string(d.m) + ", " + std::to_string(d.k) + ", " + std::to_string(d.n) +
      "\n"
      "a = rng.standard_normal((m, k), dtype=np.float32)\n"
      "b = rng.random((k, n), dtype=np.float32)\n"
      "c = rng.standard_normal((m, 1), dtype=np.float32)\n"
      "def run(): return " +
      statement +
      "\n"
      "run()\n"
      "t = []\n"
      "for _ in range(3):\n"
      "    s = time.perf_counter(); run(); t.append(time.perf_counter() - s)\n"
      "print(sorted(t)[1] * 1e3)\n";
  FILE* p = popen(("python3 -c '" + script + "' 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  double ms = 0;
  const bool read = std::fscanf(p, "%lf", &ms) == 1;
  return pclose(p) == 0 && read ? std::optional(ms) : std::nullopt;
}

// Why a workload has no numpy time: python3 lacks numpy, or --quick.
constexpr const char* kNoNumpy[] = {"not importable", "not timed in --quick mode"};

// One workload's milliseconds per call on each device.
struct Times {
  std::optional<double> gpu_ms;
  double cpu_ms = 0;
};

// The times, numpy's (or why there is none), and the GPU's speed-ups over both.
void report(const Times& t, std::optional<double> np_ms, const char* no_numpy) {
  if (t.gpu_ms) std::printf("  GPU:         %10.2f ms\n", *t.gpu_ms);
  if (!t.gpu_ms) std::printf("  GPU:         none\n");
  std::printf("  CPU backend: %10.2f ms\n", t.cpu_ms);
  if (np_ms) std::printf("  numpy:       %10.2f ms\n", *np_ms);
  if (!np_ms) std::printf("  numpy:       %s\n", no_numpy);
  if (t.gpu_ms && np_ms) std::printf("  GPU vs numpy:       %.1fx\n", *np_ms / *t.gpu_ms);
  if (t.gpu_ms) std::printf("  GPU vs CPU backend: %.1fx\n", t.cpu_ms / *t.gpu_ms);
}

// cudamat's product; in --quick mode each element checked against the bound.
bool cudamat(const Dims& d, bool quick) {
  std::printf("cudamat: C = dot(A, B), A %lldx%lld, B %lldx%lld, f32\n", (long long)d.m,
              (long long)d.k, (long long)d.k, (long long)d.n);
  const nf::Array A = nf::randn({d.m, d.k}), B = nf::rand({d.k, d.n});
  const Reference ref =
      quick ? host_dot(A.to_vector<float>(), B.to_vector<float>(), d) : Reference{};
  Times t;
  bool ok = true;
  for (nf::Device dev : example::devices()) {
    const nf::Array a = example::on(A, dev), b = example::on(B, dev);
    nf::Array C;
    const double ms = example::median_ms([&] { return C = nf::dot(a, b); }, quick ? 5 : 3);
    if (dev.kind == nf::Device::Kind::cuda) t.gpu_ms = ms;
    if (dev.kind == nf::Device::Kind::cpu) t.cpu_ms = ms;
    if (!quick) continue;
    const std::vector<float> c = C.to_vector<float>();
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < c.size(); ++i)
      wrong += !(std::abs(c[i] - ref.value[i]) <= ref.bound[i]);
    ok &= check("product", dev, wrong, std::int64_t(c.size()));
  }
  report(t, quick ? std::nullopt : numpy_ms("a @ b", d), kNoNumpy[quick]);
  return ok;
}

// The RBM step. In --quick mode: the logistic of the product checked against
// the reference's, within the product's bound (the logistic's slope is at
// most 1/4) and a few roundings; the states all 0 or 1, and as many ones as
// the probabilities promise, within a loose bound.
bool rbm(const Dims& d, bool quick) {
  std::printf(
      "rbm: H = astype(rand({m, n}) < sigmoid(dot(A, B) + c), f32), A %lldx%lld, "
      "B %lldx%lld, c %lldx1, f32\n",
      (long long)d.m, (long long)d.k, (long long)d.k, (long long)d.n, (long long)d.m);
  // Small weights and inputs in [0, 1), as an RBM's: most probabilities are
  // neither 0 nor 1, so the sampling is seen.
  const nf::Array A = 0.1f * nf::randn({d.m, d.k}), B = nf::rand({d.k, d.n});
  const nf::Array c = 0.1f * nf::randn({d.m, 1});
  Reference ref = quick ? host_dot(A.to_vector<float>(), B.to_vector<float>(), d) : Reference{};
  const std::vector<float> host_c = c.to_vector<float>();
  double mean_p = 0;
  for (std::size_t i = 0; i < ref.value.size(); ++i) {
    const double x = ref.value[i] + host_c[i / d.n];
    ref.bound[i] = 0.25 * (ref.bound[i] + kU * std::abs(x)) + 8 * kU;
    ref.value[i] = 1 / (1 + std::exp(-x));
    mean_p += ref.value[i] / double(ref.value.size());
  }
  Times t;
  bool ok = true;
  for (nf::Device dev : example::devices()) {
    const nf::Array a = example::on(A, dev), b = example::on(B, dev), col = example::on(c, dev);
    // Lazy: nothing runs until H's assignment, one statement; the check reads the same p.
    const nf::Expr p = nf::sigmoid(nf::dot(a, b) + col);
    nf::Array H;
    const double ms = example::median_ms(
        [&] {
          return H = nf::astype(nf::rand({d.m, d.n}) < p, nf::f32);
        },
        quick ? 5 : 10);
    if (dev.kind == nf::Device::Kind::cuda) t.gpu_ms = ms;
    if (dev.kind == nf::Device::Kind::cpu) t.cpu_ms = ms;
    if (!quick) continue;
    const std::vector<float> probs = p.to_vector<float>();
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < probs.size(); ++i)
      wrong += !(std::abs(probs[i] - ref.value[i]) <= ref.bound[i]);
    ok &= check("logistic", dev, wrong, std::int64_t(probs.size()));
    const std::vector<float> h = H.to_vector<float>();
    const auto binary = std::count_if(h.begin(), h.end(), [](float v) { return v == 0 || v == 1; });
    double mean_h = 0;
    for (float v : h) mean_h += v / double(h.size());
    // One state's variance is at most 1/4: over 4096 states the mean's
    // deviation is at most 0.008, and 0.05 leaves six times that.
    const bool sampled = binary == std::int64_t(h.size()) && std::abs(mean_h - mean_p) < 0.05;
    std::printf(
        "  check on %s: states %s (%lld of %lld are 0 or 1, mean %.4f, mean of the "
        "logistic %.4f)\n",
        nf::to_string(dev).c_str(), sampled ? "ok" : "WRONG", (long long)binary,
        (long long)h.size(), mean_h, mean_p);
    ok &= sampled;
  }
  const char* numpy_rbm =
      "(rng.random((m, n), dtype=np.float32) < 1 / (1 + np.exp(-(a @ b + c)))).astype(np.float32)";
  report(t, quick ? std::nullopt : numpy_ms(numpy_rbm, d), kNoNumpy[quick]);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc == 2 && std::string(argv[1]) == "--quick";
  if (argc > 2 || (argc == 2 && !quick)) {
    std::fprintf(stderr, "usage: gemm_speedup [--quick]\n");
    return 2;
  }
  std::printf("default device %s%s\n", nf::to_string(nf::default_device()).c_str(),
              quick ? ", --quick: small sizes, checked, times not meaningful" : "");
  nf::seed(0);
  bool ok = cudamat(quick ? Dims{64, 512, 64} : Dims{2000, 40000, 2000}, quick);
  ok &= rbm(quick ? Dims{128, 64, 32} : Dims{4096, 2048, 256}, quick);
  return ok ? 0 : 1;
}
