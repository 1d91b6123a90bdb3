// Products past one 2-D matrix on the GPU, against the CPU backend in f64
// within products.hpp's bounds: batched and broadcast batches
// (strided-batched cuBLASLt), operands no BLAS layout reads, the f32
// precision modes, and bias and activation epilogues. Also random numbers
// drawn on the GPU: the CPU backend's numbers, with the right distribution.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <iomanip>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "../stats.hpp"
#include "products.hpp"

using nf::test::check_within;
using nf::test::compare_product;
using nf::test::half_subnormal_step;
using nf::test::half_ulp;
using nf::test::host_uniform;
using nf::test::kCpu;
using nf::test::kGpu;
using nf::test::product_rtol;
using nf::test::runs_on_gpu;

namespace {

const std::vector<nf::DType> kFloats = {nf::f32, nf::f64, nf::f16, nf::bf16};

// Sizes that are not multiples of 8 or 16, so no tile divides them.
constexpr std::int64_t kM = 37, kK = 53, kN = 29;

// Restores the calling thread's matmul precision when a test ends, even a
// failed one, so that no later test runs in a mode it did not ask for.
struct PrecisionGuard {
  nf::MatmulPrecision saved = nf::matmul_precision();
  ~PrecisionGuard() { nf::set_matmul_precision(saved); }
};

// `e` evaluated on the CPU backend (its leaves live there).
nf::Array on_cpu(const nf::Expr& e) {
  nf::set_default_device(kCpu);
  nf::Array r = e;
  nf::set_default_device(kGpu);
  return r;
}

// Every element of `x` exactly `v`; the first that is not is reported.
void check_all(const nf::Array& x, double v) {
  const std::vector<double> got = x.to_vector<double>();
  std::size_t wrong = 0;
  double first = v;
  for (double g : got) {
    if (g != v && wrong++ == 0) first = g;
  }
  INFO(wrong << " of " << got.size() << " elements are not " << std::setprecision(17) << v
             << ", e.g. " << first);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("batched products: every batch shape and dtype through cuBLASLt", "[gpu][gemm]") {
  struct Case {
    nf::Shape a, b, result;
  };
  const std::int64_t m = kM, k = kK, n = kN;
  const std::vector<Case> cases = {
      {{3, m, k}, {3, k, n}, {3, m, n}},
      {{3, m, k}, {k, n}, {3, m, n}},  // a 2-D operand broadcast over the batch
      {{m, k}, {3, k, n}, {3, m, n}},
      {{3, 1, m, k}, {1, 4, k, n}, {3, 4, m, n}},  // each operand broadcast along one axis
      {{1, m, k}, {5, k, n}, {5, m, n}},
      {{3, 1, k}, {3, k, n}, {3, 1, n}},  // rows, columns and 1 x K . K x 1 per batch
      {{3, m, k}, {3, k, 1}, {3, m, 1}},
      {{3, 1, k}, {3, k, 1}, {3, 1, 1}},
      {{4, 128, 256}, {4, 256, 64}, {4, 128, 64}},
  };
  for (const nf::DType t : kFloats) {
    for (const Case& c : cases) {
      nf::seed(300 + std::uint64_t(t) * 16 + std::uint64_t(&c - cases.data()));
      const nf::Array a = host_uniform(c.a, t), b = host_uniform(c.b, t);
      INFO(nf::name(t) << " " << nf::to_string(c.a) << " @ " << nf::to_string(c.b));
      const nf::Expr e = nf::matmul(a.to(kGpu), b.to(kGpu));
      CHECK(e.shape() == c.result);
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), a, b);
    }
  }
}

TEST_CASE("batched products of views: per-matrix transposes and a batch slice", "[gpu][gemm]") {
  const std::int64_t m = kM, k = kK, n = kN;
  const auto tail = nf::slice(1, nf::none);
  for (const nf::DType t : kFloats) {
    nf::seed(400 + std::uint64_t(t));
    const nf::Array a = host_uniform({3, m, k}, t), b = host_uniform({3, k, n}, t);
    // Stored with each matrix transposed, and with one batch more than used.
    const nf::Array at = host_uniform({3, k, m}, t), bt = host_uniform({3, n, k}, t);
    const nf::Array abig = host_uniform({4, m, k}, t), b2t = host_uniform({n, k}, t);
    const nf::Array ga = a.to(kGpu), gb = b.to(kGpu), gat = at.to(kGpu), gbt = bt.to(kGpu),
                    gabig = abig.to(kGpu), gb2t = b2t.to(kGpu);
    INFO(nf::name(t));
    {
      INFO("at.transpose({0, 2, 1}) @ b: a view cuBLASLt reads as transposed matrices");
      const nf::Expr e = nf::matmul(gat.transpose({0, 2, 1}), gb);
      CHECK(runs_on_gpu(e));
      const nf::Plan p = nf::plan({e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == 0);
      compare_product(nf::Array(e), at.transpose({0, 2, 1}), b);
    }
    {
      INFO("a @ transpose(bt, {0, 2, 1}): the transpose as an expression");
      const nf::Expr e = nf::matmul(ga, nf::transpose(gbt, {0, 2, 1}));
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), a, bt.transpose({0, 2, 1}));
    }
    {
      INFO("at.transpose({0, 2, 1}) @ bt.transpose({0, 2, 1})");
      const nf::Expr e = nf::matmul(gat.transpose({0, 2, 1}), gbt.transpose({0, 2, 1}));
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), at.transpose({0, 2, 1}), bt.transpose({0, 2, 1}));
    }
    {
      INFO("at.transpose({0, 2, 1}) @ b2t.T(): both transposed, one broadcast");
      const nf::Expr e = nf::matmul(gat.transpose({0, 2, 1}), gb2t.T());
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), at.transpose({0, 2, 1}), b2t.T());
    }
    {
      INFO("abig[1:] @ b: batches that start inside their buffer");
      const nf::Array view = gabig.index({tail, nf::all, nf::all});
      const nf::Expr e = nf::matmul(view, gb);
      CHECK(runs_on_gpu(e));
      const nf::Plan p = nf::plan({e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == 0);
      compare_product(nf::Array(e), abig.index({tail, nf::all, nf::all}), b);
    }
  }
}

TEST_CASE("products of stepped views and of expressions run on the GPU", "[gpu][gemm]") {
  const std::int64_t m = kM, k = kK, n = kN;
  const auto every_other = nf::slice(0, nf::none, 2);
  for (const nf::DType t : kFloats) {
    nf::seed(500 + std::uint64_t(t));
    const nf::Array a = host_uniform({m, k}, t), b = host_uniform({k, n}, t);
    // Every other column: strides (2k, 2) and (3, 2n, 2), no unit stride.
    const nf::Array awide = host_uniform({m, 2 * k}, t), bwide = host_uniform({3, k, 2 * n}, t);
    const nf::Array ga = a.to(kGpu), gb = b.to(kGpu), gawide = awide.to(kGpu),
                    gbwide = bwide.to(kGpu);
    INFO(nf::name(t));
    {
      INFO("awide[:, ::2] @ b: the operand copied by one kernel, then one product");
      const nf::Expr e = nf::matmul(gawide.index({nf::all, every_other}), gb);
      CHECK(runs_on_gpu(e));
      const nf::Plan p = nf::plan({e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == 1);
      compare_product(nf::Array(e), awide.index({nf::all, every_other}), b);
    }
    {
      INFO("a @ bwide[:, :, ::2], batched");
      const nf::Expr e = nf::matmul(ga, gbwide.index({nf::all, nf::all, every_other}));
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), a, bwide.index({nf::all, nf::all, every_other}));
    }
    {
      INFO("(a * 2 + 1) @ b: an operand computed by a kernel");
      const nf::Expr e = nf::matmul(ga * 2 + 1, gb);
      CHECK(runs_on_gpu(e));
      const nf::Plan p = nf::plan({e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == 1);
      compare_product(nf::Array(e), on_cpu(a * 2 + 1), b);
    }
    {
      INFO("dot(a.T(), b) of leaves: the transposed leaf read where it lies");
      const nf::Array at = host_uniform({k, m}, t);
      const nf::Expr e = nf::dot(at.to(kGpu).T(), gb);
      const nf::Plan p = nf::plan({e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == 0);
      compare_product(nf::Array(e), at.T(), b);
    }
  }
}

namespace {

// 1 + 2^-9 is a tf32 number (10 fraction bits) but not a bf16 one (7);
// 1 + 2^-12 is neither, and both round to 1 in a mode that cannot hold them.
// Every partial sum of 64 of them (times 1) is exact in f32 in any order,
// so each mode's answer is exact: 64 (1 + 2^-9) = 64 + 2^-3 and
// 64 (1 + 2^-12) = 64 + 2^-6 where the operand is kept, 64 where it is not.
constexpr double kTf32Exact = 1 + 0x1p-9, kNeither = 1 + 0x1p-12;

// (64 x 64 of x) . ones and ones . (64 x 64 of x): both operands are rounded.
void check_mode_answer(double x, double want) {
  INFO("x = 1 + 2^" << std::log2(x - 1));
  const nf::Array filled = nf::full({64, 64}, x, nf::f32), ones = nf::ones({64, 64}, nf::f32);
  check_all(nf::matmul(filled, ones), want);
  check_all(nf::matmul(ones, filled), want);
}

}  // namespace

TEST_CASE("f32 products in tf32 and bf16 modes stay within their bounds", "[gpu][gemm]") {
  PrecisionGuard guard;
  struct Mode {
    nf::MatmulPrecision mode;
    const char* name;
    double rounding;  // the bound ops.hpp gives for the operands' rounding
  };
  const std::vector<Mode> modes = {{nf::tf32, "tf32", 0x1p-9},
                                   {nf::MatmulPrecision::bf16, "bf16", 0x1p-6}};
  struct Dims {
    std::int64_t m, k, n;
  };
  for (const Mode& mode : modes) {
    for (const Dims d : {Dims{kM, kK, kN}, Dims{256, 512, 128}, Dims{1, 300, 1}}) {
      nf::seed(600 + std::uint64_t(mode.mode) * 8 + std::uint64_t(d.k));
      const nf::Array a = host_uniform({d.m, d.k}, nf::f32), b = host_uniform({d.k, d.n}, nf::f32);
      INFO(mode.name << " (" << d.m << " x " << d.k << ") . (" << d.k << " x " << d.n << ")");
      nf::set_matmul_precision(mode.mode);
      const nf::Expr e = nf::matmul(a.to(kGpu), b.to(kGpu));
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), a, b, mode.rounding + product_rtol(d.k, nf::f32));
    }
  }
}

TEST_CASE("the precision mode rounds f32 operands as it says", "[gpu][gemm]") {
  PrecisionGuard guard;
  nf::set_default_device(kGpu);
  struct ModeAnswer {
    nf::MatmulPrecision mode;
    double tf32_exact, neither;
  };
  // bf16 rounds to bf16's 7 bits or tf32's 10, at cuBLASLt's choice (ops.hpp):
  // only the value neither holds has one answer there. f32 again at the end:
  // a statement planned in another mode is not reused.
  const double either = -1;
  const std::vector<ModeAnswer> answers = {{nf::MatmulPrecision::f32, 64 + 0x1p-3, 64 + 0x1p-6},
                                           {nf::tf32, 64 + 0x1p-3, 64},
                                           {nf::MatmulPrecision::bf16, either, 64},
                                           {nf::MatmulPrecision::f32, 64 + 0x1p-3, 64 + 0x1p-6}};
  for (const ModeAnswer& m : answers) {
    INFO("mode " << int(m.mode));
    nf::set_matmul_precision(m.mode);
    if (m.tf32_exact != either) check_mode_answer(kTf32Exact, m.tf32_exact);
    check_mode_answer(kNeither, m.neither);
  }
}

TEST_CASE("the precision mode belongs to the thread that sets it", "[gpu][gemm]") {
  PrecisionGuard guard;
  nf::set_default_device(kGpu);
  const nf::Array x = nf::full({64, 64}, kNeither, nf::f32), ones = nf::ones({64, 64}, nf::f32);
  nf::set_matmul_precision(nf::tf32);
  // Catch's assertions are not thread-safe: the worker records, the test checks.
  nf::MatmulPrecision seen = nf::tf32;
  nf::Array worker_product;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      seen = nf::matmul_precision();
      worker_product = nf::matmul(x, ones);
      nf::set_matmul_precision(nf::bf16);  // not the main thread's business
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  CHECK(seen == nf::MatmulPrecision::f32);
  check_all(worker_product, 64 + 0x1p-6);
  CHECK(nf::matmul_precision() == nf::tf32);
  check_all(nf::matmul(x, ones), 64);
}

TEST_CASE("a product keeps the precision mode it was built in", "[gpu][gemm]") {
  PrecisionGuard guard;
  nf::set_default_device(kGpu);
  const nf::Array x = nf::full({64, 64}, kNeither, nf::f32), ones = nf::ones({64, 64}, nf::f32);
  nf::set_matmul_precision(nf::tf32);
  const nf::Expr in_tf32 = nf::matmul(x, ones);
  nf::set_matmul_precision(nf::f32);
  const nf::Expr in_f32 = nf::matmul(x, ones);
  check_all(in_tf32, 64);
  nf::set_matmul_precision(nf::tf32);
  check_all(in_f32, 64 + 0x1p-6);
  // Inside a larger statement too.
  check_all(in_f32 * 2, 128 + 0x1p-5);
}

TEST_CASE("f64, f16 and bf16 products are full precision in every mode", "[gpu][gemm]") {
  PrecisionGuard guard;
  for (const nf::MatmulPrecision mode : {nf::tf32, nf::MatmulPrecision::bf16}) {
    for (const nf::DType t : {nf::f64, nf::f16, nf::bf16}) {
      nf::seed(700 + std::uint64_t(mode) * 8 + std::uint64_t(t));
      const nf::Array a = host_uniform({kM, kK}, t), b = host_uniform({kK, kN}, t);
      INFO("mode " << int(mode) << ", " << nf::name(t));
      nf::set_matmul_precision(mode);
      const nf::Expr e = nf::matmul(a.to(kGpu), b.to(kGpu));
      CHECK(runs_on_gpu(e));
      compare_product(nf::Array(e), a, b);
    }
    INFO("mode " << int(mode));
    nf::set_matmul_precision(mode);
    nf::set_default_device(kGpu);
    // Operands a mode's rounding would change, with exact sums: 1 + 2^-10 in
    // f16 (bf16 keeps 7 fraction bits; f16's spacing at 64 is 2^-4) and
    // 1 + 2^-30 in f64.
    const nf::Array h = nf::full({64, 64}, 1 + 0x1p-10, nf::f16);
    check_all(nf::matmul(h, nf::ones({64, 64}, nf::f16)), 64 + 0x1p-4);
    const nf::Array d = nf::full({64, 64}, 1 + 0x1p-30, nf::f64);
    check_all(nf::matmul(d, nf::ones({64, 64}, nf::f64)), 64 + 0x1p-24);
  }
}

namespace {

enum class Act { none, relu, gelu_tanh, gelu };

double activate(Act f, double x) {
  switch (f) {
    case Act::relu:
      return std::max(x, 0.0);
    case Act::gelu_tanh:
      return 0.5 * x *
             (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    case Act::gelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    default:
      return x;
  }
}

// What is added to the product: nothing, a bias along the last axis ((n,)
// or (1, n)), or a column (m, 1).
enum class Addend { none, bias, bias2, column };

struct Operands {
  nf::Array a, a3, b, bias, bias2, column;
};

struct EpilogueCase {
  std::string text;
  Act act;
  Addend addend;
  bool batched;  // a3 (3, m, k) in place of a
  std::function<nf::Expr(const Operands&)> build;
};

std::vector<EpilogueCase> epilogue_cases() {
  using O = Operands;
  return {
      {"dot(a, b) + bias", Act::none, Addend::bias, false,
       [](const O& o) { return nf::dot(o.a, o.b) + o.bias; }},
      {"bias + dot(a, b)", Act::none, Addend::bias, false,
       [](const O& o) { return o.bias + nf::dot(o.a, o.b); }},
      {"dot(a, b) + bias2", Act::none, Addend::bias2, false,
       [](const O& o) { return nf::dot(o.a, o.b) + o.bias2; }},
      {"relu(dot(a, b) + bias)", Act::relu, Addend::bias, false,
       [](const O& o) { return nf::relu(nf::dot(o.a, o.b) + o.bias); }},
      {"relu(dot(a, b))", Act::relu, Addend::none, false,
       [](const O& o) { return nf::relu(nf::dot(o.a, o.b)); }},
      {"gelu_tanh(dot(a, b) + bias)", Act::gelu_tanh, Addend::bias, false,
       [](const O& o) { return nf::gelu_tanh(nf::dot(o.a, o.b) + o.bias); }},
      {"gelu_tanh(dot(a, b))", Act::gelu_tanh, Addend::none, false,
       [](const O& o) { return nf::gelu_tanh(nf::dot(o.a, o.b)); }},
      {"matmul(a3, b) + bias", Act::none, Addend::bias, true,
       [](const O& o) { return nf::matmul(o.a3, o.b) + o.bias; }},
      {"gelu(dot(a, b) + bias)", Act::gelu, Addend::bias, false,
       [](const O& o) { return nf::gelu(nf::dot(o.a, o.b) + o.bias); }},
      {"dot(a, b) + column", Act::none, Addend::column, false,
       [](const O& o) { return nf::dot(o.a, o.b) + o.column; }},
  };
}

// `got` against act(A.B + addend) from the f64 product on the CPU. The
// product's bound holds before the addend, and the result may also be
// rounded to the dtype once after the product and once after the sum
// (a product and a kernel rather than one call); gelu's slope is at most
// 1.13, so it carries that error on, and its tanh or erf costs a few
// units of the dtype times |input| where 1 + tanh cancels. Then the final
// rounding.
void compare_epilogue(const nf::Array& got, const EpilogueCase& c, const Operands& host) {
  const nf::Array& a = c.batched ? host.a3 : host.a;
  const nf::DType t = got.dtype();
  nf::set_default_device(kCpu);
  const nf::Array a64 = a.astype(nf::f64), b64 = host.b.astype(nf::f64);
  const std::vector<double> product = nf::Array(nf::matmul(a64, b64)).to_vector<double>();
  const std::vector<double> scale =
      nf::Array(nf::matmul(nf::abs(a64), nf::abs(b64))).to_vector<double>();
  const std::vector<double> bias = host.bias.to_vector<double>();
  const std::vector<double> bias2 = host.bias2.to_vector<double>();
  const std::vector<double> column = host.column.to_vector<double>();
  nf::set_default_device(kGpu);
  const std::int64_t k = a.shape().back(), m = a.shape()[a.ndim() - 2];
  const std::int64_t n = host.b.shape().back();
  const double slope = c.act == Act::gelu || c.act == Act::gelu_tanh ? 1.13 : 1.0;
  const double act_ulps = c.act == Act::gelu || c.act == Act::gelu_tanh ? 4 : 0;
  std::vector<double> want(product.size()), tol(product.size());
  for (std::size_t i = 0; i < product.size(); ++i) {
    const std::size_t col = i % std::size_t(n), row = i / std::size_t(n) % std::size_t(m);
    const double add = c.addend == Addend::bias     ? bias[col]
                       : c.addend == Addend::bias2  ? bias2[col]
                       : c.addend == Addend::column ? column[row]
                                                    : 0.0;
    const double pre = product[i] + add;
    want[i] = activate(c.act, pre);
    tol[i] =
        slope * (product_rtol(k, t) * scale[i] +
                 half_ulp(t) * (std::abs(product[i]) + std::abs(pre)) + half_subnormal_step(t)) +
        act_ulps * half_ulp(t) * std::abs(pre) + half_ulp(t) * std::abs(want[i]) +
        half_subnormal_step(t);
  }
  REQUIRE(got.shape() == c.build(host).shape());
  check_within(got, want, tol);
}

Operands host_operands(nf::DType t) {
  return {host_uniform({kM, kK}, t), host_uniform({3, kM, kK}, t), host_uniform({kK, kN}, t),
          host_uniform({kN}, t),     host_uniform({1, kN}, t),     host_uniform({kM, 1}, t)};
}

Operands to_gpu(const Operands& o) {
  return {o.a.to(kGpu),    o.a3.to(kGpu),    o.b.to(kGpu),
          o.bias.to(kGpu), o.bias2.to(kGpu), o.column.to(kGpu)};
}

}  // namespace

TEST_CASE("bias and activation epilogues match the CPU in f64", "[gpu][gemm]") {
  for (const nf::DType t : kFloats) {
    nf::seed(800 + std::uint64_t(t));
    const Operands host = host_operands(t), dev = to_gpu(host);
    for (const EpilogueCase& c : epilogue_cases()) {
      INFO(nf::name(t) << " " << c.text);
      const nf::Expr e = c.build(dev);
      CHECK(e.dtype() == t);
      CHECK(runs_on_gpu(e));
      compare_epilogue(nf::Array(e), c, host);
    }
  }
}

TEST_CASE("an epilogue statement written into a view", "[gpu][gemm]") {
  for (const nf::DType t : kFloats) {
    nf::seed(900 + std::uint64_t(t));
    const Operands host = host_operands(t), dev = to_gpu(host);
    INFO(nf::name(t) << ": out[:, 2:n+2] = relu(dot(a, b) + bias)");
    nf::set_default_device(kGpu);
    const EpilogueCase relu_bias = {
        "relu(dot(a, b) + bias)", Act::relu, Addend::bias, false,
        [](const Operands& o) { return nf::relu(nf::dot(o.a, o.b) + o.bias); }};
    nf::Array out = nf::zeros({kM, kN + 4}, t);
    const auto inside = nf::slice(2, kN + 2);
    out.index({nf::all, inside}) = relu_bias.build(dev);
    compare_epilogue(out.index({nf::all, inside}).copy(), relu_bias, host);
    // The columns around the view are untouched.
    check_all(out.index({nf::all, nf::slice(0, 2)}), 0);
    check_all(out.index({nf::all, nf::slice(kN + 2, nf::none)}), 0);
  }
}

TEST_CASE("sampling units from a product: rand_like(h) < sigmoid(h + b)", "[gpu][gemm]") {
  nf::seed(1000);
  const nf::Array v = host_uniform({64, 96}, nf::f32), w = host_uniform({96, 80}, nf::f32);
  const nf::Array b = host_uniform({80}, nf::f32);
  const nf::Array gv = v.to(kGpu), gw = w.to(kGpu), gb = b.to(kGpu);
  // The same seed draws the same stream on both backends.
  nf::seed(1001);
  const nf::Expr h = nf::dot(gv, gw);
  const nf::Expr sample = nf::rand_like(h) < nf::sigmoid(nf::dot(gv, gw) + gb);
  CHECK(runs_on_gpu(sample));
  const std::vector<bool> got = nf::Array(sample).to_vector<bool>();
  nf::seed(1001);
  nf::set_default_device(kCpu);
  const nf::Expr hc = nf::dot(v, w);
  const nf::Expr u = nf::rand_like(hc);
  const std::vector<double> uv = nf::Array(u).to_vector<double>();
  const std::vector<double> pv = nf::Array(nf::sigmoid(hc + b)).to_vector<double>();
  nf::set_default_device(kGpu);
  REQUIRE(got.size() == uv.size());
  // The probabilities of the two backends differ in their last bits: only a
  // draw that far from its probability must compare the same.
  std::size_t wrong = 0, ones = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ones += got[i];
    if (std::abs(uv[i] - pv[i]) > 1e-5) wrong += got[i] != (uv[i] < pv[i]);
  }
  CHECK(wrong == 0);
  CHECK(ones > 0);
  CHECK(ones < got.size());
}

TEST_CASE("random numbers drawn on the GPU are the CPU backend's, and well distributed",
          "[gpu][random]") {
  using nf::test::ks_bound;
  using nf::test::ks_statistic;
  using nf::test::mean_of;
  using nf::test::normal_cdf;
  using nf::test::uniform_cdf;
  using nf::test::variance_of;
  // 2^20 elements: more than one pass of a grid, and enough draws for the
  // statistics to see a lane mix-up or a repeated block.
  const std::int64_t n = std::int64_t(1) << 20;
  // Per-element probabilities 0, 1/4, 1/2, 3/4, 1 in turn.
  std::vector<float> probs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < probs.size(); ++i) probs[i] = float(i % 5) / 4;
  nf::set_default_device(kCpu);
  const nf::Array p = nf::array(probs);
  const std::vector<std::string> names = {"rand", "randn", "bernoulli(0.3)", "bernoulli(p)",
                                          "rand_like"};
  auto draw = [&](const nf::Array& probability) {
    nf::seed(2024);
    return std::vector<nf::Array>{nf::rand({n}), nf::randn({n}), nf::bernoulli({n}, 0.3),
                                  nf::bernoulli(probability), nf::rand_like(probability)};
  };
  const std::vector<nf::Array> cpu = draw(p);
  nf::set_default_device(kGpu);
  const std::vector<nf::Array> gpu = draw(p.to(kGpu));
  std::vector<std::vector<double>> values;
  for (std::size_t r = 0; r < gpu.size(); ++r) {
    INFO(names[r]);
    REQUIRE(gpu[r].device() == kGpu);
    REQUIRE(gpu[r].dtype() == nf::f32);
    REQUIRE(gpu[r].shape() == nf::Shape{n});
    const std::vector<float> g = gpu[r].to_vector<float>(), c = cpu[r].to_vector<float>();
    REQUIRE(c.size() == g.size());
    CHECK(std::memcmp(g.data(), c.data(), g.size() * sizeof(float)) == 0);
    values.emplace_back(g.begin(), g.end());
  }
  const double count = double(n);
  {
    INFO("rand: uniform on (0, 1]");
    const std::vector<double>& u = values[0];
    CHECK(*std::min_element(u.begin(), u.end()) > 0);
    CHECK(*std::max_element(u.begin(), u.end()) <= 1);
    CHECK(std::abs(mean_of(u) - 0.5) < 5 * std::sqrt(1.0 / 12 / count));
    // Var(sample variance) = (mu4 - sigma^4) / n with mu4 = 1/80 for U(0, 1).
    CHECK(std::abs(variance_of(u) - 1.0 / 12) < 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / count));
    CHECK(ks_statistic(u, uniform_cdf) < ks_bound(u.size()));
  }
  {
    INFO("randn: standard normal");
    const std::vector<double>& g = values[1];
    CHECK(std::abs(mean_of(g)) < 5 / std::sqrt(count));
    CHECK(std::abs(variance_of(g) - 1.0) < 5 * std::sqrt(2.0 / (count - 1)));
    CHECK(ks_statistic(g, normal_cdf) < ks_bound(g.size()));
  }
  {
    INFO("bernoulli({n}, 0.3): 0 or 1, 1 with frequency 0.3");
    std::size_t ones = 0, others = 0;
    for (double x : values[2]) {
      ones += x == 1;
      others += x != 0 && x != 1;
    }
    CHECK(others == 0);
    CHECK(std::abs(double(ones) / count - 0.3) < 5 * std::sqrt(0.3 * 0.7 / count));
  }
  {
    INFO("bernoulli(p): each element's own probability");
    double ones[5] = {}, drawn[5] = {};
    std::size_t others = 0;
    for (std::size_t i = 0; i < values[3].size(); ++i) {
      const double x = values[3][i];
      others += x != 0 && x != 1;
      ones[i % 5] += x;
      drawn[i % 5] += 1;
    }
    CHECK(others == 0);
    CHECK(ones[0] == 0);
    CHECK(ones[4] == drawn[4]);
    for (int c = 1; c < 4; ++c) {
      const double q = c / 4.0;
      INFO("p = " << q);
      CHECK(std::abs(ones[c] / drawn[c] - q) < 5 * std::sqrt(q * (1 - q) / drawn[c]));
    }
  }
  {
    INFO("rand_like(p): uniform, p's shape and dtype");
    const std::vector<double>& u = values[4];
    CHECK(std::abs(mean_of(u) - 0.5) < 5 * std::sqrt(1.0 / 12 / count));
    CHECK(ks_statistic(u, uniform_cdf) < ks_bound(u.size()));
  }
}
