// Matrix products on the GPU (cuBLASLt) against the CPU backend in f64, on
// random data: row and column vectors, sizes that are not multiples of 8 or
// 16, transposed and sliced views read where they lie, every dtype cuBLASLt
// takes, and a product inside a larger statement. products.hpp says how
// close a product must be.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "products.hpp"

using nf::test::compare_product;
using nf::test::host_uniform;
using nf::test::kCpu;
using nf::test::kGpu;
using nf::test::runs_on_gpu;

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
