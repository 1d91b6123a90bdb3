// Matrix products on the GPU (cuBLASLt) against the CPU backend in f64, on
// random data: row and column vectors, sizes that are not multiples of 8 or
// 16, transposed and sliced views read where they lie, every dtype cuBLASLt
// takes, and a product inside a larger statement.
//
// The error of an entry grows with the magnitudes summed into it: within
// 4 sqrt(k) units of the accumulating type of (|A| |B|)ij, plus the final
// rounding to the result's dtype (subnormal results included).
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "api/plan_cache.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace {

const nf::Device kCpu = nf::Device::cpu();
const nf::Device kGpu{nf::Device::Kind::cuda, 0};

// Uniform values in [-1, 1] of dtype t, drawn on the CPU.
nf::Array host_uniform(const nf::Shape& shape, nf::DType t) {
  nf::set_default_device(kCpu);
  nf::Array a = nf::astype(2.0 * nf::rand(shape, nf::f64) - 1.0, t);
  nf::set_default_device(kGpu);
  return a;
}

double unit(nf::DType t) {
  return t == nf::f64 ? 0x1p-53 : 0x1p-24;
}

double half_ulp(nf::DType t) {
  return t == nf::f16 ? 0x1p-11 : t == nf::bf16 ? 0x1p-8 : t == nf::f32 ? 0x1p-24 : 0x1p-53;
}

// Half the spacing of subnormals: below the smallest normal number a result
// is rounded to a step that no longer shrinks with it (f16: 2^-24).
double half_subnormal_step(nf::DType t) {
  return t == nf::f16 ? 0x1p-25 : t == nf::bf16 ? 0x1p-134 : t == nf::f32 ? 0x1p-150 : 0;
}

// `got` (on the GPU) against A.B in f64 on the CPU.
void compare_product(const nf::Array& got, const nf::Array& a, const nf::Array& b) {
  nf::set_default_device(kCpu);
  const nf::Array a64 = a.astype(nf::f64), b64 = b.astype(nf::f64);
  const std::vector<double> want = nf::Array(nf::matmul(a64, b64)).to_vector<double>();
  const std::vector<double> scale =
      nf::Array(nf::matmul(nf::abs(a64), nf::abs(b64))).to_vector<double>();
  nf::set_default_device(kGpu);
  REQUIRE(got.device() == kGpu);
  const std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  const std::int64_t k = a.shape().back();
  const double rtol = 4 * std::sqrt(double(k)) * unit(got.dtype());
  std::size_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double tol = rtol * scale[i] + half_ulp(got.dtype()) * std::abs(want[i]) +
                       half_subnormal_step(got.dtype());
    if (!(std::abs(g[i] - want[i]) <= tol) && bad++ < 3) {
      first << "\n  element " << i << ": cpu " << want[i] << ", gpu " << g[i] << " (tolerance "
            << tol << ")";
    }
  }
  INFO(bad << " of " << g.size() << " elements differ" << first.str());
  CHECK(bad == 0);
}

// Whether `y = expr` on the GPU runs there, rather than on host copies.
bool runs_on_gpu(const nf::Expr& e) {
  const nf::Array out = nf::empty(e.shape(), e.dtype());
  const nf::Program p = nf::make_program({e.node()});
  const std::vector<nf::Array> outs{out};
  return nf::cuda_plan(p, outs, nf::default_schedule_options())->launches != nullptr;
}

}  // namespace

TEST_CASE("products: cuBLASLt matches the CPU in f64 on every shape and view", "[gpu][gemm]") {
  struct Dims {
    std::int64_t m, k, n;
  };
  const std::vector<Dims> dims = {{1, 1, 1},    {1, 300, 1},  {300, 1, 200},  {37, 53, 29},
                                  {1, 64, 257}, {129, 17, 1}, {256, 512, 128}};
  for (const nf::DType t : {nf::f32, nf::f64, nf::f16, nf::bf16}) {
    for (const Dims& d : dims) {
      nf::seed(100 + std::uint64_t(t) * 16 + std::uint64_t(&d - dims.data()));
      const nf::Array a = host_uniform({d.m, d.k}, t), b = host_uniform({d.k, d.n}, t);
      // The same operands transposed in memory, and inside larger arrays.
      const nf::Array at = host_uniform({d.k, d.m}, t), bt = host_uniform({d.n, d.k}, t);
      const nf::Array abig = host_uniform({d.m + 3, d.k + 5}, t);
      const nf::Array ga = a.to(kGpu), gb = b.to(kGpu), gat = at.to(kGpu), gbt = bt.to(kGpu),
                      gabig = abig.to(kGpu);
      const auto rows = nf::slice(3, nf::none), cols = nf::slice(1, d.k + 1);
      INFO(nf::name(t) << " (" << d.m << " x " << d.k << ") . (" << d.k << " x " << d.n << ")");
      {
        INFO("a . b");
        CHECK(runs_on_gpu(nf::matmul(ga, gb)));
        compare_product(nf::Array(nf::matmul(ga, gb)), a, b);
      }
      {
        INFO("a.T() . b, a.T() a transposed view");
        CHECK(runs_on_gpu(nf::matmul(gat.T(), gb)));
        compare_product(nf::Array(nf::matmul(gat.T(), gb)), at.T(), b);
      }
      {
        INFO("a . b.T(), b.T() a transposed view");
        compare_product(nf::Array(nf::matmul(ga, gbt.T())), a, bt.T());
      }
      {
        INFO("a.T() . b.T()");
        compare_product(nf::Array(nf::matmul(gat.T(), gbt.T())), at.T(), bt.T());
      }
      {
        INFO("a[3:, 1:k+1] . b, a view that starts inside its buffer");
        const nf::Array view = gabig.index({rows, cols});
        CHECK(runs_on_gpu(nf::matmul(view, gb)));
        compare_product(nf::Array(nf::matmul(view, gb)), abig.index({rows, cols}), b);
      }
    }
  }
}

TEST_CASE("products: inside a statement, and into a view", "[gpu][gemm]") {
  nf::seed(7);
  const nf::Array v = host_uniform({64, 96}, nf::f32), w = host_uniform({96, 80}, nf::f32);
  const nf::Array bias = host_uniform({80}, nf::f32);
  const nf::Array gv = v.to(kGpu), gw = w.to(kGpu), gbias = bias.to(kGpu);
  {
    INFO("sigmoid(dot(v, w) + b): one product, then one kernel");
    const nf::Expr e = nf::sigmoid(nf::dot(gv, gw) + gbias);
    const nf::Plan plan = nf::plan({e});
    CHECK(plan.gemm_count() == 1);
    CHECK(plan.kernel_count() == 1);
    CHECK(runs_on_gpu(e));
    const nf::Array got = e;
    nf::set_default_device(kCpu);
    const nf::Array want = nf::sigmoid(nf::dot(v.astype(nf::f64), w.astype(nf::f64)) + bias);
    nf::set_default_device(kGpu);
    const auto g = got.to_vector<double>(), wv = want.to_vector<double>();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < g.size(); ++i) bad += !(std::abs(g[i] - wv[i]) <= 3e-5);
    CHECK(bad == 0);
  }
  {
    INFO("1-D operands: a row, a column, or both (a 0-d result)");
    const nf::Array x = host_uniform({96}, nf::f32), y = host_uniform({80}, nf::f32);
    const nf::Array gx = x.to(kGpu), gy = y.to(kGpu);
    CHECK(runs_on_gpu(nf::dot(gx, gw)));
    compare_product(nf::Array(nf::dot(gx, gw)), x, w);
    compare_product(nf::Array(nf::dot(gw, gy)), w, y);
    compare_product(nf::Array(nf::dot(gx, gx)), x, x);
  }
  {
    INFO("out[:, 2:82] = dot(v, w): the product written into a view");
    nf::Array out = nf::zeros({64, 84});
    const auto cols = nf::slice(2, 82);
    out.index({nf::all, cols}) = nf::dot(gv, gw);
    compare_product(out.index({nf::all, cols}).copy(), v, w);
    CHECK(nf::Array(nf::sum(nf::abs(out.index({nf::all, nf::slice(0, 2)})))).item<float>() == 0);
  }
}
