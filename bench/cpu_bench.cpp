// The CPU backend against numpy on the same cores: a large f32 product, an
// RBM's up-pass and the layer-norm line. Wall clock per call (each call
// evaluates its statement into an existing array), after two warm-up calls,
// the median of repeated calls. bench/cpu_numpy.py runs the same with numpy
// and prints both side by side.
//
//   cpu_bench [--quick]      (--quick: smaller shapes, for a smoke run)
// Prints one JSON line per workload.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "cpu/thread_pool.hpp"

namespace {

// Median wall-clock milliseconds per call of f, over at least `min_runs`
// calls and about a second.
double median_ms(const std::function<void()>& f, int min_runs) {
  for (int i = 0; i < 2; ++i) f();
  std::vector<double> ms;
  double total = 0;
  while (int(ms.size()) < min_runs || (total < 1000 && ms.size() < 200)) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - t0;
    ms.push_back(d.count());
    total += d.count();
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

void report(const char* work, const std::string& shape, double ms) {
  std::printf("{\"work\": \"%s\", \"shape\": \"%s\", \"impl\": \"numfuse\", \"ms\": %.3f}\n", work,
              shape.c_str(), ms);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  nf::set_default_device(nf::Device::cpu());
  std::printf("{\"threads\": %d}\n", nf::cpu::thread_count());

  {  // The product of issue 20: 2000x40000 . 40000x2000, f32.
    const std::int64_t m = quick ? 200 : 2000, k = quick ? 4000 : 40000, n = m;
    const nf::Array A = nf::randn({m, k}), B = nf::randn({k, n});
    nf::Array C = nf::empty({m, n});
    report("gemm", nf::to_string({m, k, n}), median_ms([&] { C = nf::dot(A, B); }, 5));
  }
  {  // An RBM's up-pass: hidden probabilities, sampled as 0/1 floats.
    const std::int64_t b = quick ? 512 : 4096, nv = 2048, nh = 256;
    const nf::Array v = nf::rand({b, nv});
    const nf::Array W = nf::randn({nv, nh}) * 0.1f;
    const nf::Array bias = nf::randn({1, nh});
    nf::Array hs = nf::empty({b, nh});
    const auto up = [&] {
      const nf::Expr h = nf::sigmoid(nf::dot(v, W) + bias);
      hs = nf::astype(nf::rand_like(h) < h, nf::f32);
    };
    report("rbm_up", nf::to_string({b, nv, nh}), median_ms(up, 10));
  }
  {  // The layer-norm line, over rows.
    const std::int64_t rows = quick ? 1024 : 8192, cols = 4096;
    const nf::Array x = nf::randn({rows, cols});
    nf::Array y = nf::empty({rows, cols});
    const float eps = 1e-5f;
    const auto ln = [&] {
      y = (x - nf::mean(x, 1)) * nf::reciprocal(nf::sqrt(nf::var(x, 1) + eps));
    };
    report("layernorm", nf::to_string({rows, cols}), median_ms(ln, 10));
  }
}
