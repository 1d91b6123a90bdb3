// Generated kernels on the GPU against the CPU backend on the same data.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "graph/build.hpp"
#include "graph/op_table.hpp"

namespace {

const nf::Device kCpu = nf::Device::cpu();
const nf::Device kGpu{nf::Device::Kind::cuda, 0};

// Random values in [lo, hi] of dtype t, made on the CPU.
nf::Array host_random(const nf::Shape& shape, nf::DType t, double lo, double hi, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(std::size_t(nf::numel(shape)));
  for (auto& x : v) x = is_integral(t) || t == nf::bool_ ? std::round(d(gen)) : d(gen);
  nf::set_default_device(kCpu);
  nf::Array a = nf::array(v, shape).astype(t);
  nf::set_default_device(kGpu);
  return a;
}

double tolerance(nf::DType t) {
  switch (t) {
    case nf::DType::f16:
      return 4e-3;
    case nf::DType::bf16:
      return 3e-2;
    case nf::DType::f32:
      return 2e-6;
    case nf::DType::f64:
      return 1e-13;
    default:
      return 0;
  }
}

// f over CPU arrays and over GPU copies of them: the same values.
void check_same(const std::vector<nf::Array>& host,
                const std::function<std::vector<nf::Expr>(const std::vector<nf::Array>&)>& f) {
  std::vector<nf::Array> dev;
  for (const auto& h : host) dev.push_back(h.to(kGpu));
  nf::set_default_device(kCpu);
  const std::vector<nf::Array> want = nf::eval(f(host));
  nf::set_default_device(kGpu);
  const std::vector<nf::Array> got = nf::eval(f(dev));
  REQUIRE(want.size() == got.size());
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("result " << r << " " << nf::name(want[r].dtype()) << nf::to_string(want[r].shape()));
    REQUIRE(got[r].device() == kGpu);
    REQUIRE(got[r].dtype() == want[r].dtype());
    const auto w = want[r].to_vector<double>(), g = got[r].to_vector<double>();
    REQUIRE(w.size() == g.size());
    const double tol = tolerance(want[r].dtype());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const bool both_nan = std::isnan(w[i]) && std::isnan(g[i]);
      if (!both_nan && !(std::abs(w[i] - g[i]) <= tol * std::max(1.0, std::abs(w[i])))) {
        if (bad++ < 3) UNSCOPED_INFO("element " << i << ": cpu " << w[i] << " gpu " << g[i]);
      }
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("every elementwise op x dtype matches the CPU backend", "[gpu][fused]") {
  struct Row {
    nf::OpId op;
    int arity;
  };
  const std::vector<Row> rows = {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) {nf::OpId::name, arity},
#include "graph/ops.def"
  };
  for (nf::DType t : nf::all_dtypes) {
    INFO(nf::name(t));
    const bool ints = !nf::is_floating(t);
    // Values every op accepts: positive, inside asin's domain for floats.
    const auto x = host_random({37, 65}, t, ints ? 1 : 0.05, ints ? 5 : 0.95, 1);
    const auto y = host_random({37, 65}, t, ints ? 1 : 0.05, ints ? 3 : 0.95, 2);
    const auto z = host_random({37, 65}, t, ints ? 1 : 0.05, ints ? 5 : 0.95, 3);
    check_same({x, y, z}, [&](const std::vector<nf::Array>& a) {
      std::vector<nf::Expr> out;
      for (const Row& r : rows) {
        if (nf::op_info(r.op).accepts == nf::Accepts::numeric && t == nf::bool_) continue;
        std::vector<nf::NodePtr> ins{nf::Expr(a[0]).node()};
        if (r.arity >= 2) ins.push_back(nf::Expr(a[1]).node());
        if (r.arity == 3) ins.push_back(nf::Expr(a[2]).node());
        if (r.op == nf::OpId::where) ins[0] = nf::Expr(nf::Expr(a[2]) > 2).node();
        out.push_back(nf::Expr(nf::make_elementwise(r.op, ins)));
      }
      return out;
    });
  }
}

TEST_CASE("broadcasting, views as inputs and a multi-output statement", "[gpu][fused]") {
  const auto a = host_random({7, 1, 5}, nf::f32, -2, 2, 4);
  const auto b = host_random({3, 1}, nf::f32, -2, 2, 5);
  const auto m = host_random({40, 30}, nf::f32, -2, 2, 6);
  const auto h = host_random({30}, nf::f16, -2, 2, 7);
  check_same({a, b, m, h}, [](const std::vector<nf::Array>& v) {
    nf::Expr t = v[2].T();  // transposed view
    nf::Expr s = v[2](nf::slice(1, nf::none, 3), nf::slice(nf::none, nf::none, -2));  // strided
    return std::vector<nf::Expr>{nf::exp(v[0]) * v[1] - 1.0f, t * 2.0f + 1.0f, nf::tanh(s),
                                 v[2] * v[3], nf::sqrt(nf::abs(v[2])) + v[3]};
  });
}

TEST_CASE("assignments into views and in-place updates on the GPU", "[gpu][fused]") {
  nf::set_default_device(kGpu);
  const auto host = host_random({64, 64}, nf::f32, -1, 1, 8);
  nf::Array cpu = host.copy();
  nf::Array gpu = host.to(kGpu);
  auto both = [&](const std::function<void(nf::Array&)>& f) {
    nf::set_default_device(kCpu);
    f(cpu);
    nf::set_default_device(kGpu);
    f(gpu);
    const auto w = cpu.to_vector<double>(), g = gpu.to_vector<double>();
    for (std::size_t i = 0; i < w.size(); ++i)
      REQUIRE(g[i] == Approx(w[i]).epsilon(1e-6).margin(1e-6));
  };
  both([](nf::Array& a) { a = nf::sin(a) * 2.0f; });
  both([](nf::Array& a) { a += a.T(); });
  both([](nf::Array& a) {
    a(nf::all, nf::slice(0, 64, 2)) = a(nf::all, nf::slice(1, 64, 2)) + 1.0f;
  });
  both([](nf::Array& a) { a(nf::slice(3, 9)) *= 0.5f; });
  both([](nf::Array& a) { a = nf::where(a > 0, a, 0.0f) - nf::ones({64}); });
}

TEST_CASE("expressions of any size run: a 500-term sum and a loop-grown expression",
          "[gpu][fused]") {
  nf::set_default_device(kGpu);
  std::vector<nf::Array> terms;
  std::vector<double> want(64 * 3, 0.0);
  for (int k = 0; k < 500; ++k) {
    const auto h = host_random({64, 3}, nf::f32, -1, 1, 100 + k);
    const auto v = h.to_vector<double>();
    for (std::size_t i = 0; i < v.size(); ++i) want[i] += v[i];
    terms.push_back(h.to(kGpu));
  }
  nf::Expr sum = terms[0];
  for (int k = 1; k < 500; ++k) sum = sum + terms[k];  // depth 500: past the depth cap
  const auto got = nf::Array(sum).to_vector<double>();
  for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-4));

  nf::Array a = host_random({1000}, nf::f64, 0, 1, 7).to(kGpu);
  const auto a0 = a.to_vector<double>();
  nf::Expr e = a;
  for (int i = 0; i < 2000; ++i) e = e * 0.999 + a;
  const auto grown = nf::Array(e).to_vector<double>();
  for (std::size_t i = 0; i < a0.size(); ++i) {
    double w = a0[i];
    for (int k = 0; k < 2000; ++k) w = w * 0.999 + a0[i];
    REQUIRE(grown[i] == Approx(w).epsilon(1e-12));
  }
}

TEST_CASE("random numbers match the CPU backend for the same seed", "[gpu][fused]") {
  for (nf::DType t : {nf::f32, nf::f64}) {
    nf::set_default_device(kCpu);
    nf::seed(11);
    const auto cu = nf::Array(nf::rand({100003}, t)).to_vector<double>();
    const auto cn = nf::Array(nf::randn({100003}, t)).to_vector<double>();
    nf::set_default_device(kGpu);
    nf::seed(11);
    const auto gu = nf::Array(nf::rand({100003}, t)).to_vector<double>();
    const auto gn = nf::Array(nf::randn({100003}, t)).to_vector<double>();
    // Bit for bit: both backends compute the normals with jit/runtime's own
    // log and sincospi, not with their platform's libm.
    CHECK(cu == gu);
    CHECK(cn == gn);
  }
}

TEST_CASE("arrays of more than 2^31 elements", "[gpu][fused][big]") {
  nf::set_default_device(kGpu);
  const std::int64_t n = (std::int64_t(1) << 31) + 9;
  nf::Array a = nf::zeros({n}, nf::u8);
  a(nf::slice(n - 4, nf::none)) = 7;
  nf::Array b = a * 2 + 1;
  CHECK(b(0).item<int>() == 1);
  CHECK(b(n - 5).item<int>() == 1);
  CHECK(b(n - 1).item<int>() == 15);
  CHECK(b((std::int64_t(1) << 31) + 6).item<int>() == 15);
}
