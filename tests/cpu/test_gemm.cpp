// dot and matmul against hand-written loops in double; what products and
// their epilogues plan; the matmul precision setting.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"

namespace {

nf::Array random_array(const nf::Shape& shape, nf::DType t, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<double> v(nf::numel(shape));
  for (auto& x : v) x = dist(gen) + 0.25 * dist(gen);
  return nf::array(v, shape).astype(t);
}

// (b, m, k) @ (b, k, n) with explicit broadcast of size-1 batches.
std::vector<double> reference(const nf::Array& a, const nf::Array& b) {
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape().back(), n = b.shape().back();
  const int64_t ba = a.ndim() == 3 ? a.shape()[0] : 1, bb = b.ndim() == 3 ? b.shape()[0] : 1;
  const int64_t batch = std::max(ba, bb);
  std::vector<double> out(batch * m * n, 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) {
          s +=
              av[(ba == 1 ? 0 : z) * m * k + i * k + q] * bv[(bb == 1 ? 0 : z) * k * n + q * n + j];
        }
        out[z * m * n + i * n + j] = s;
      }
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("matmul of 2-D and batched operands, views and odd sizes", "[gemm]") {
  for (nf::DType t : {nf::f32, nf::f64, nf::f16, nf::i32, nf::i64}) {
    const double tol = t == nf::f16 ? 1e-2 : 1e-6;
    for (auto [m, k, n] :
         {std::array<int64_t, 3>{1, 1, 1}, {1, 7, 1}, {7, 1, 5}, {13, 9, 11}, {3, 0, 2}}) {
      INFO(nf::name(t) << " " << m << "x" << k << "x" << n);
      nf::Array a = random_array({m, k}, t, 1), b = random_array({k, n}, t, 2);
      nf::Array c = nf::matmul(a, b);
      CHECK(c.shape() == nf::Shape{m, n});
      CHECK(c.dtype() == t);
      check_close(c.to_vector<double>(), reference(a, b), tol);
      // Transposed views are read in place.
      nf::Array at = random_array({k, m}, t, 3).T(), bt = random_array({n, k}, t, 4).T();
      check_close(nf::Array(nf::dot(at, bt)).to_vector<double>(), reference(at.copy(), bt.copy()),
                  tol);
    }
    nf::Array a3 = random_array({4, 5, 6}, t, 5), b3 = random_array({4, 6, 3}, t, 6);
    check_close(nf::Array(nf::matmul(a3, b3)).to_vector<double>(), reference(a3, b3), tol);
    nf::Array b1 = random_array({1, 6, 3}, t, 7);  // broadcast batch
    check_close(nf::Array(nf::matmul(a3, b1)).to_vector<double>(), reference(a3, b1), tol);
    nf::Array b2 = random_array({6, 3}, t, 8);  // 2-D operand broadcast over the batch
    CHECK(nf::Array(nf::matmul(a3, b2)).shape() == nf::Shape{4, 5, 3});
    check_close(nf::Array(nf::matmul(a3, b2)).to_vector<double>(),
                reference(a3, b2.reshape({1, 6, 3})), tol);
    nf::Array strided = random_array({8, 12}, t, 9)(nf::slice(0, 8, 2), nf::slice(1, 12, 2));
    nf::Array s2 = random_array({6, 5}, t, 10);
    check_close(nf::Array(nf::dot(strided, s2)).to_vector<double>(), reference(strided.copy(), s2),
                tol);
  }
}

TEST_CASE("dot follows numpy's rules for 1-D operands", "[gemm]") {
  nf::Array v = nf::array(std::vector<double>{1, 2, 3});
  nf::Array w = nf::array(std::vector<double>{4, -5, 6});
  nf::Array m = nf::arange(0.0, 6.0, 1.0, nf::f64).reshape({3, 2});
  nf::Array vv = nf::dot(v, w);
  CHECK(vv.ndim() == 0);
  CHECK(vv.item<double>() == 12.0);
  CHECK(nf::Array(nf::dot(v, m)).to_vector<double>() == std::vector<double>{16, 22});
  CHECK(nf::Array(nf::dot(m.T(), v)).to_vector<double>() == std::vector<double>{16, 22});
  CHECK(nf::Array(nf::dot(v, 2.0)).to_vector<double>() == std::vector<double>{2, 4, 6});
  nf::Array col = nf::array(std::vector<double>{1, 2}, {2, 1});
  nf::Array row = nf::array(std::vector<double>{3, 4, 5}, {1, 3});
  CHECK(nf::Array(nf::dot(col, row)).to_vector<double>() == std::vector<double>{3, 4, 5, 6, 8, 10});
  CHECK(nf::matmul(nf::ones({2, 3}), nf::ones({3})).shape() == nf::Shape{2});
  CHECK_THROWS_AS(nf::dot(nf::ones({2, 2, 2}), nf::ones({2, 2})), nf::ShapeError);
  CHECK((nf::dot(nf::ones({2, 2}, nf::i32), nf::ones({2, 2}, nf::f32))).dtype() == nf::f64);
}

namespace {

// Restores the calling thread's matmul precision when a test ends, even a
// failed one, so that no later test runs in a mode it did not ask for.
struct PrecisionGuard {
  nf::MatmulPrecision saved = nf::matmul_precision();
  ~PrecisionGuard() { nf::set_matmul_precision(saved); }
};

// a @ b by reference(): both operands broadcast to the full batch first.
std::vector<double> batched_reference(const nf::Array& a, const nf::Array& b,
                                      const nf::Shape& out) {
  const nf::Shape batch(out.begin(), out.end() - 2);
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape().back(), n = b.shape().back();
  nf::Shape ashape = batch, bshape = batch;
  ashape.insert(ashape.end(), {m, k});
  bshape.insert(bshape.end(), {k, n});
  const int64_t count = nf::numel(batch);
  return reference(a.broadcast_to(ashape).copy().reshape({count, m, k}),
                   b.broadcast_to(bshape).copy().reshape({count, k, n}));
}

}  // namespace

TEST_CASE("matmul broadcasts batch axes of any rank and reads batched views", "[gemm]") {
  struct Case {
    nf::Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{3, 1, 5, 6}, {1, 4, 6, 3}, {3, 4, 5, 3}},
      {{1, 5, 6}, {4, 6, 3}, {4, 5, 3}},
      {{5, 6}, {3, 6, 3}, {3, 5, 3}},
      {{2, 1, 1, 6}, {3, 6, 1}, {2, 3, 1, 1}},
  };
  for (nf::DType t : {nf::f32, nf::f64}) {
    for (const Case& c : cases) {
      INFO(nf::name(t) << " " << nf::to_string(c.a) << " @ " << nf::to_string(c.b));
      nf::Array a = random_array(c.a, t, 11), b = random_array(c.b, t, 12);
      nf::Array got = nf::matmul(a, b);
      CHECK(got.shape() == c.out);
      check_close(got.to_vector<double>(), batched_reference(a, b, c.out), 1e-6);
    }
    INFO(nf::name(t) << ": a per-matrix transpose and a batch slice");
    nf::Array at = random_array({3, 6, 5}, t, 13).transpose({0, 2, 1});
    nf::Array big = random_array({4, 6, 3}, t, 14);
    nf::Array tail = big.index({nf::slice(1, nf::none), nf::all, nf::all});
    check_close(nf::Array(nf::matmul(at, tail)).to_vector<double>(),
                reference(at.copy(), tail.copy()), 1e-6);
  }
}

TEST_CASE("set_matmul_precision takes f32, tf32 and bf16 and no other dtype", "[gemm]") {
  PrecisionGuard guard;
  nf::set_matmul_precision(nf::MatmulPrecision::f32);
  CHECK(nf::matmul_precision() == nf::MatmulPrecision::f32);
  nf::set_matmul_precision(nf::tf32);
  CHECK(nf::matmul_precision() == nf::MatmulPrecision::tf32);
  nf::set_matmul_precision(nf::bf16);
  CHECK(nf::matmul_precision() == nf::MatmulPrecision::bf16);
  nf::set_matmul_precision(nf::f32);
  CHECK(nf::matmul_precision() == nf::MatmulPrecision::f32);
  nf::set_matmul_precision(nf::tf32);
  for (nf::DType t : {nf::i32, nf::i64, nf::f16, nf::f64, nf::u8, nf::bool_}) {
    INFO(nf::name(t));
    CHECK_THROWS_AS(nf::set_matmul_precision(t), nf::ValueError);
    CHECK(nf::matmul_precision() == nf::tf32);
  }
}

TEST_CASE("the matmul precision belongs to the calling thread", "[gemm]") {
  PrecisionGuard guard;
  nf::set_matmul_precision(nf::tf32);
  // Catch's assertions are not thread-safe: the worker records, the test checks.
  nf::MatmulPrecision seen = nf::tf32, set_there = nf::tf32;
  std::thread([&] {
    seen = nf::matmul_precision();
    nf::set_matmul_precision(nf::bf16);
    set_there = nf::matmul_precision();
  }).join();
  CHECK(seen == nf::MatmulPrecision::f32);
  CHECK(set_there == nf::MatmulPrecision::bf16);
  CHECK(nf::matmul_precision() == nf::tf32);
}

TEST_CASE("the CPU backend computes f32 products in full f32 in every mode",
          "[cpu-backend][gemm]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  PrecisionGuard guard;
  // 1 + 2^-12 is neither a tf32 nor a bf16 number, and every partial sum of
  // 64 of them is exact in f32: 64 + 2^-6 only if nothing rounded them.
  const nf::Array x = nf::full({64, 64}, 1 + 0x1p-12, nf::f32);
  for (nf::MatmulPrecision mode : {nf::tf32, nf::MatmulPrecision::bf16}) {
    INFO("mode " << int(mode));
    nf::set_matmul_precision(mode);
    const std::vector<float> got = nf::Array(nf::matmul(x, nf::ones({64, 64}))).to_vector<float>();
    CHECK(got == std::vector<float>(64 * 64, 64 + 0x1p-6f));
  }
}

TEST_CASE("a product reads a transposed leaf where it lies and copies a stepped one once",
          "[gemm]") {
  const int64_t m = 37, k = 53, n = 29;
  const auto every_other = nf::slice(0, nf::none, 2);
  for (nf::DType t : {nf::f32, nf::f64, nf::f16, nf::bf16}) {
    INFO(nf::name(t));
    const nf::Array a = nf::ones({m, k}, t), at = nf::ones({k, m}, t), b = nf::ones({k, n}, t);
    const nf::Array bt = nf::ones({n, k}, t), wide = nf::ones({m, 2 * k}, t);
    const nf::Array at3 = nf::ones({3, k, m}, t), big = nf::ones({4, m, k}, t);
    struct Case {
      const char* text;
      nf::Expr e;
      int kernels;
    };
    const std::vector<Case> cases = {
        {"dot(at.T(), b)", nf::dot(at.T(), b), 0},
        {"dot(a, bt.T())", nf::dot(a, bt.T()), 0},
        {"matmul(at3.transpose({0, 2, 1}), b)", nf::matmul(at3.transpose({0, 2, 1}), b), 0},
        {"matmul(big[1:], b)", nf::matmul(big.index({nf::slice(1, nf::none), nf::all, nf::all}), b),
         0},
        {"matmul(wide[:, ::2], b)", nf::matmul(wide.index({nf::all, every_other}), b), 1},
        {"matmul(a * 2 + 1, b)", nf::matmul(a * 2 + 1, b), 1},
    };
    for (const Case& c : cases) {
      INFO(c.text);
      const nf::Plan p = nf::plan({c.e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == c.kernels);
    }
  }
}

TEST_CASE("bias and activation epilogues plan as one product and no kernel", "[gemm]") {
  const int64_t m = 37, k = 53, n = 29;
  for (nf::DType t : {nf::f32, nf::f16, nf::bf16}) {
    INFO(nf::name(t));
    const nf::Array a = nf::ones({m, k}, t), a3 = nf::ones({3, m, k}, t), b = nf::ones({k, n}, t);
    const nf::Array bias = nf::ones({n}, t), bias2 = nf::ones({1, n}, t);
    const nf::Array column = nf::ones({m, 1}, t);
    const nf::Expr ab = nf::dot(a, b);
    struct Case {
      const char* text;
      nf::Expr e;
      int kernels;
    };
    const std::vector<Case> cases = {
        {"dot(a, b) + bias", ab + bias, 0},
        {"bias + dot(a, b)", bias + ab, 0},
        {"dot(a, b) + bias2", ab + bias2, 0},
        {"relu(dot(a, b) + bias)", nf::relu(ab + bias), 0},
        {"relu(dot(a, b))", nf::relu(ab), 0},
        {"gelu_tanh(dot(a, b) + bias)", nf::gelu_tanh(ab + bias), 0},
        {"gelu_tanh(dot(a, b))", nf::gelu_tanh(ab), 0},
        {"matmul(a3, b) + bias", nf::matmul(a3, b) + bias, 0},
        // cuBLASLt computes gelu's tanh form only: the erf form is a kernel.
        {"gelu(dot(a, b) + bias)", nf::gelu(ab + bias), 1},
        // A bias along the rows is not an epilogue.
        {"dot(a, b) + column", ab + column, 1},
    };
    for (const Case& c : cases) {
      INFO(c.text);
      const nf::Plan p = nf::plan({c.e});
      CHECK(p.gemm_count() == 1);
      CHECK(p.kernel_count() == c.kernels);
    }
  }
  INFO("sampling hidden units: rand_like(h) < sigmoid(h + b), h = dot(v, W)");
  const nf::Array v = nf::ones({64, 96}), w = nf::ones({96, 80}), b = nf::ones({80});
  const nf::Expr h = nf::dot(v, w);
  const nf::Plan p = nf::plan({nf::rand_like(h) < nf::sigmoid(nf::dot(v, w) + b)});
  CHECK(p.gemm_count() == 1);
  CHECK(p.kernel_count() <= 1);
}

TEST_CASE("an epilogue on the CPU gives what separate statements give", "[cpu-backend][gemm]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (nf::DType t : {nf::f32, nf::f64}) {
    INFO(nf::name(t));
    // Operands are multiples of 1/4 up to 5, so with k = 9 every product and
    // sum is a multiple of 1/16 below 2^8: exact, in any order.
    const nf::Array a = random_array({13, 9}, t, 21), b = random_array({9, 11}, t, 22);
    const nf::Array bias = random_array({11}, t, 23), bias2 = random_array({1, 11}, t, 24);
    const nf::Array a3 = random_array({3, 13, 9}, t, 25);
    const nf::Array ab = nf::dot(a, b);
    const nf::Array sum = ab + bias;
    // relu has something to do.
    REQUIRE(nf::min(sum).item<double>() < 0);
    REQUIRE(nf::max(sum).item<double>() > 0);
    auto same = [](const nf::Expr& got, const nf::Expr& want) {
      CHECK(got.to_vector<double>() == want.to_vector<double>());
    };
    same(nf::relu(nf::dot(a, b) + bias), nf::maximum(sum, 0));
    same(nf::dot(a, b) + bias, sum);
    same(bias + nf::dot(a, b), sum);
    same(nf::dot(a, b) + bias2, ab + bias2);
    same(nf::relu(nf::dot(a, b)), nf::maximum(ab, 0));
    same(nf::gelu_tanh(nf::dot(a, b) + bias), nf::gelu_tanh(sum));
    same(nf::gelu_tanh(nf::dot(a, b)), nf::gelu_tanh(ab));
    const nf::Array a3b = nf::matmul(a3, b);
    same(nf::matmul(a3, b) + bias, a3b + bias);
  }
}

namespace {

// Products of shape (batch, m, k) @ (batch, k, n) for each batch size, with
// plain and transposed operands, against reference() in double; tol is
// relative to 1 + |value| per dtype.
void check_against_loops(std::int64_t m, std::int64_t k, std::int64_t n,
                         std::initializer_list<std::int64_t> batches, double tol_f32,
                         double tol_f64) {
  for (nf::DType t : {nf::f32, nf::f64}) {
    for (std::int64_t batch : batches) {
      INFO(nf::name(t) << ", batch " << batch);
      const nf::Array a = nf::randn({batch, m, k}, t), b = nf::randn({batch, k, n}, t);
      // Stored transposed: the tasks read them through BLAS's layouts.
      const nf::Array at = nf::randn({batch, k, m}, t), bt = nf::randn({batch, n, k}, t);
      for (int variant = 0; variant < 3; ++variant) {
        const nf::Array& lhs = variant == 1 ? nf::Array(at.transpose({0, 2, 1})) : a;
        const nf::Array& rhs = variant == 2 ? nf::Array(bt.transpose({0, 2, 1})) : b;
        nf::Array c = nf::full({batch, m, n}, NAN, t);
        c = nf::matmul(lhs, rhs);
        const auto got = c.to_vector<double>(), want = reference(lhs, rhs);
        const double tol = t == nf::f32 ? tol_f32 : tol_f64;
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          bad += !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
        }
        INFO("variant " << variant);
        CHECK(bad == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("products cut into tiles equal plain loops: odd sides, transposed operands, batches",
          "[cpu-backend][gemm]") {
  // Each product here is large enough to be cut into tiles on two threads.
  check_against_loops(301, 129, 203, {1, 3}, 1e-4, 1e-12);
}

TEST_CASE("long sums cut into parts equal plain loops: odd sides, transposed operands, batches",
          "[cpu-backend][gemm]") {
  // k is long beside m and n: on two threads or more the single product's sum
  // is cut into parts, added into the output after (matmul.cpp); on more
  // threads than products, each product of the batch's too. Its sums of
  // 20011 products of N(0, 1) values lie near +-141.
  check_against_loops(37, 20011, 29, {1, 2}, 1e-3, 1e-10);
}
