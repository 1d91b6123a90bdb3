// The CPU backend against numpy on the same cores: the three workloads of
// issue 20 (a large f32 product, an RBM's up-pass, the layer-norm line), then
// a sample of the classes users write around them: broadcasts of every
// pattern, a transposed operand, f64, f16 and integer dtypes, reductions over
// every axis set, products of other shapes and dtypes. Odd sizes throughout.
// Wall clock per call (each call evaluates its statement into an existing
// array), after two warm-up calls, the median of repeated calls.
// bench/cpu_numpy.py runs the same with numpy and prints both side by side.
//
//   cpu_bench [--quick] [--work NAME,...]
//     --quick: smaller shapes, for a smoke run; --work: only the workloads named
// Prints one JSON line per workload.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
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

std::set<std::string> g_works;  // --work: the workloads to run; empty: all

bool selected(const char* work) {
  return g_works.empty() || g_works.count(work) > 0;
}

void report(const char* work, const std::string& shape, double ms) {
  std::printf("{\"work\": \"%s\", \"shape\": \"%s\", \"impl\": \"numfuse\", \"ms\": %.3f}\n", work,
              shape.c_str(), ms);
  std::fflush(stdout);
}

// One statement of the class sample, evaluated into the array its first
// evaluation made.
void time_statement(const char* work, const nf::Shape& shape,
                    const std::function<nf::Expr()>& statement) {
  if (!selected(work)) return;
  nf::Array y = statement();
  report(work, nf::to_string(shape), median_ms([&] { y = statement(); }, 10));
}

// The class sample: names, shapes and statements as in cpu_numpy.py.
void class_sample(bool quick) {
  const nf::Shape m2 = quick ? nf::Shape{256, 259} : nf::Shape{4096, 4099};
  const nf::Shape m3 = quick ? nf::Shape{8, 33, 127} : nf::Shape{64, 257, 1021};
  const nf::Shape m4 = quick ? nf::Shape{4, 9, 7, 11} : nf::Shape{43, 61, 37, 127};
  const std::int64_t sq = quick ? 509 : 4093;
  const nf::Array x = nf::randn(m2), x3 = nf::randn(m3), s = nf::randn({sq, sq});
  const nf::Array x4 = nf::randn(m4), x3h = nf::randn(m3, nf::f16);
  const nf::Array row = nf::randn({1, m2[1]}), col = nf::randn({m2[0], 1});
  const nf::Array last = nf::randn({1, 1, m3[2]}), middle = nf::randn({1, m3[1], 1});
  const nf::Array xd = nf::randn(m2, nf::f64), xh = nf::randn(m2, nf::f16);
  const nf::Array xi = nf::astype(nf::rand(m2) * 1000.f, nf::i32);
  const nf::Array xb = nf::astype(nf::rand(m2) * 255.f, nf::u8);
  const float eps = 1e-5f;

  time_statement("add_row", m2, [&] { return x + row; });
  time_statement("add_col", m2, [&] { return x + col; });
  time_statement("bias_relu_3d", m3, [&] { return nf::relu(x3 + last) * 2.f; });
  time_statement("middle_3d", m3, [&] { return x3 * middle; });
  time_statement("transpose_add", {sq, sq}, [&] { return s + s.T(); });
  time_statement("chain_f64", m2, [&] { return nf::exp(-xd * xd) * 0.5 + xd; });
  time_statement("chain_f16", m2, [&] { return nf::exp(-xh * xh) * 0.5 + xh; });
  time_statement("max_i32", m2, [&] { return nf::maximum(xi * 3, xi + 7); });
  time_statement("u8_to_f32", m2, [&] { return nf::astype(xb, nf::f32) * (1.f / 255); });
  time_statement("sum_axis0", m3, [&] { return nf::sum(x3, 0); });
  time_statement("sum_axis1", m3, [&] { return nf::sum(x3, 1); });
  time_statement("sum_axis2", m3, [&] { return nf::sum(x3, 2); });
  time_statement("sum_axes02", m3, [&] { return nf::sum(x3, {0, 2}); });
  time_statement("sum_all", m3, [&] { return nf::sum(x3); });
  time_statement("sum_axes01", m3, [&] { return nf::sum(x3, {0, 1}); });
  time_statement("sum_axes13_4d", m4, [&] { return nf::sum(x4, {1, 3}); });
  time_statement("sum_axes02_f16", m3, [&] { return nf::sum(x3h, {0, 2}); });
  time_statement("center_axes02", m3, [&] { return x3 - nf::mean(x3, {0, 2}); });
  time_statement("var_axes01", m3, [&] { return nf::var(x3, {0, 1}); });
  time_statement("max_axis1", m3, [&] { return nf::max(x3, 1); });
  time_statement("argmax_axis2", m3, [&] { return nf::argmax(x3, 2); });
  time_statement("normalize_cols", m2, [&] {
    return (x - nf::mean(x, 0)) * nf::reciprocal(nf::sqrt(nf::var(x, 0) + eps));
  });
  time_statement("softmax_rows", m2, [&] {
    const nf::Expr e = nf::exp(x - nf::max(x, 1));
    return e / nf::sum(e, 1);
  });

  const std::int64_t gm = quick ? 200 : 2000, gk = quick ? 400 : 4000;
  const nf::Array ad = nf::randn({gm, gk}, nf::f64), bd = nf::randn({gk, gm}, nf::f64);
  time_statement("gemm_f64", {gm, gk, gm}, [&] { return nf::dot(ad, bd); });
  const std::int64_t tk = quick ? 199 : 1999, tm = quick ? 301 : 3001, tn = quick ? 203 : 2003;
  const nf::Array at = nf::randn({tk, tm}), bt = nf::randn({tk, tn});
  time_statement("gemm_t_odd", {tm, tk, tn}, [&] { return nf::dot(at.T(), bt); });
  const std::int64_t batch = quick ? 16 : 256;
  const nf::Array ab = nf::randn({batch, 64, 128}), bb = nf::randn({batch, 128, 64});
  time_statement("matmul_batched", {batch, 64, 128, 64}, [&] { return nf::matmul(ab, bb); });
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--work") == 0 && i + 1 < argc) {
      std::stringstream names(argv[++i]);
      for (std::string name; std::getline(names, name, ',');) g_works.insert(name);
    } else {
      std::fprintf(stderr, "usage: cpu_bench [--quick] [--work NAME,...]\n");
      return 2;
    }
  }
  nf::set_default_device(nf::Device::cpu());
  std::printf("{\"threads\": %d}\n", nf::cpu::thread_count());

  if (selected("gemm")) {  // The product of issue 20: 2000x40000 . 40000x2000, f32.
    const std::int64_t m = quick ? 200 : 2000, k = quick ? 4000 : 40000, n = m;
    const nf::Array A = nf::randn({m, k}), B = nf::randn({k, n});
    nf::Array C = nf::empty({m, n});
    report("gemm", nf::to_string({m, k, n}), median_ms([&] { C = nf::dot(A, B); }, 5));
  }
  if (selected("rbm_up")) {  // An RBM's up-pass: hidden probabilities, sampled as 0/1 floats.
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
  if (selected("layernorm")) {  // The layer-norm line, over rows.
    const std::int64_t rows = quick ? 1024 : 8192, cols = 4096;
    const nf::Array x = nf::randn({rows, cols});
    nf::Array y = nf::empty({rows, cols});
    const float eps = 1e-5f;
    const auto ln = [&] {
      y = (x - nf::mean(x, 1)) * nf::reciprocal(nf::sqrt(nf::var(x, 1) + eps));
    };
    report("layernorm", nf::to_string({rows, cols}), median_ms(ln, 10));
  }
  class_sample(quick);
}
