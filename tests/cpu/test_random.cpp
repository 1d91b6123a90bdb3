// Random numbers through the public API: distributions, reproducibility and
// the (seed, stream, i) contract of jit/runtime/nf_philox.h.
//
// The statistical checks use a fixed seed, so they are deterministic; their
// bounds (5 standard errors, Kolmogorov-Smirnov at the 1% level) are loose
// enough that a correct generator passes for almost every seed, and tight
// enough that a wrong transform, a lane mix-up or a repeated block fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"

#include "../stats.hpp"
#include "runtime/nf_philox.h"

using nf::Array;
using nf::test::ks_bound;
using nf::test::ks_statistic;
using nf::test::mean_of;
using nf::test::normal_cdf;
using nf::test::uniform_cdf;
using nf::test::variance_of;

namespace {

constexpr std::int64_t kN = 100003;

// The values of a random array as doubles (f16 and bf16 read exactly through f32).
std::vector<double> values(const Array& a) {
  if (a.dtype() == nf::f64) return a.to_vector<double>();
  std::vector<float> f = a.to_vector<float>();
  return std::vector<double>(f.begin(), f.end());
}

// Rounding to a storage type moves each value by at most half its spacing,
// so the empirical CDF moves by at most that much in x; for U(0, 1] and the
// standard normal (density <= 0.4) that bounds the change in D. The spacing
// of f16 in [0.5, 1) is 2^-11, of bf16 2^-8; for normals up to |x| < 8, 8x
// that.
double rounding_slack(nf::DType t, bool normal) {
  const double half_spacing = t == nf::f16 ? 0x1p-12 : t == nf::bf16 ? 0x1p-9 : 0.0;
  return normal ? 0.4 * 8 * half_spacing : half_spacing;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Restores the CPU compute dtype when a test ends, even a failed one.
struct ComputeDtypeGuard {
  nf::DType saved = nf::cpu_compute_dtype();
  ~ComputeDtypeGuard() { nf::set_cpu_compute_dtype(saved); }
};

}  // namespace

TEST_CASE("rand is uniform on the half-open unit interval for every floating dtype", "[random]") {
  const nf::DType dtype = GENERATE(nf::f32, nf::f64, nf::bf16, nf::f16);
  INFO("dtype " << nf::name(dtype));
  nf::seed(20240601);
  Array a = nf::rand({kN}, dtype);
  REQUIRE(a.dtype() == dtype);
  REQUIRE(a.shape() == nf::Shape{kN});
  const std::vector<double> v = values(a);

  std::size_t above_one = 0, below_zero = 0, zeros = 0;
  for (double x : v) {
    if (x > 1.0 || std::isnan(x)) ++above_one;
    if (x < 0.0) ++below_zero;
    if (x == 0.0) ++zeros;
  }
  CHECK(above_one == 0);
  CHECK(below_zero == 0);
  // f32 values are at least 2^-33, which bf16 (f32's exponent range) keeps;
  // f16 rounds values below 2^-25 to 0, so an f16 zero is possible (with
  // probability 2^-25 per element) and is not checked here.
  if (dtype != nf::f16) CHECK(zeros == 0);

  if (dtype == nf::f64) {
    // f64 values carry 53 random bits (cuRAND's _curand_uniform_double_hq),
    // not a 32-bit value widened: v * 2^32 has a varying fractional part
    // (2^-22 alone would mean the low 21 bits are all zero).
    std::size_t coarse = 0;
    for (double x : v) {
      const double f = x * 0x1p32 - std::floor(x * 0x1p32);
      if (f == 0.0 || f == 0x1p-22) ++coarse;
    }
    CHECK(coarse < v.size() / 1000);
  }

  const double n = double(v.size());
  CHECK(std::abs(mean_of(v) - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  // Var(sample variance) = (mu4 - sigma^4) / n with mu4 = 1/80 for U(0, 1).
  CHECK(std::abs(variance_of(v) - 1.0 / 12) < 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
  CHECK(ks_statistic(v, uniform_cdf) < ks_bound(v.size()) + rounding_slack(dtype, false));
}

TEST_CASE("randn is standard normal", "[random]") {
  const nf::DType dtype = GENERATE(nf::f32, nf::f64, nf::bf16, nf::f16);
  INFO("dtype " << nf::name(dtype));
  nf::seed(77);
  Array a = nf::randn({kN}, dtype);
  REQUIRE(a.dtype() == dtype);
  const std::vector<double> v = values(a);

  std::size_t not_finite = 0;
  for (double x : v) not_finite += std::isfinite(x) ? 0 : 1;
  REQUIRE(not_finite == 0);
  const double n = double(v.size());
  CHECK(std::abs(mean_of(v)) < 5 / std::sqrt(n));
  CHECK(std::abs(variance_of(v) - 1.0) < 5 * std::sqrt(2.0 / (n - 1)));
  CHECK(ks_statistic(v, normal_cdf) < ks_bound(v.size()) + rounding_slack(dtype, true));
  // Both Box-Muller outputs are used: the sine half (even lanes) and the
  // cosine half (odd lanes) must each be standard normal.
  std::vector<double> even, odd;
  for (std::size_t i = 0; i < v.size(); ++i) (i % 2 ? odd : even).push_back(v[i]);
  CHECK(ks_statistic(even, normal_cdf) < ks_bound(even.size()) + rounding_slack(dtype, true));
  CHECK(ks_statistic(odd, normal_cdf) < ks_bound(odd.size()) + rounding_slack(dtype, true));
}

TEST_CASE("neighbouring random values are uncorrelated", "[random]") {
  // A lane mix-up (two elements from one word) shows as correlation.
  nf::seed(5);
  for (bool normal : {false, true}) {
    for (nf::DType dtype : {nf::f32, nf::f64}) {
      INFO((normal ? "randn " : "rand ") << nf::name(dtype));
      Array a = normal ? Array(nf::randn({kN}, dtype)) : Array(nf::rand({kN}, dtype));
      const std::vector<double> v = values(a);
      const double m = mean_of(v), var = variance_of(v);
      for (std::size_t lag : {1, 2, 3, 4}) {
        double c = 0;
        for (std::size_t i = 0; i + lag < v.size(); ++i) c += (v[i] - m) * (v[i + lag] - m);
        c /= double(v.size() - lag) * var;
        CHECK(std::abs(c) < 5 / std::sqrt(double(v.size())));
      }
    }
  }
}

TEST_CASE("bernoulli gives 0 or 1 with frequency p", "[random]") {
  nf::seed(99);
  for (double p : {0.0, 0.3, 0.5, 1.0}) {
    for (nf::DType dtype : {nf::f32, nf::f64}) {
      INFO("p " << p << " dtype " << nf::name(dtype));
      Array b = nf::bernoulli({kN}, p, dtype);
      REQUIRE(b.dtype() == dtype);
      const std::vector<double> v = values(b);
      std::size_t ones = 0, others = 0;
      for (double x : v) {
        if (x == 1.0)
          ++ones;
        else if (x != 0.0)
          ++others;
      }
      CHECK(others == 0);
      const double n = double(v.size());
      if (p == 0.0) CHECK(ones == 0);
      if (p == 1.0) CHECK(ones == v.size());
      CHECK(std::abs(double(ones) / n - p) <= 5 * std::sqrt(p * (1 - p) / n));
    }
  }
}

TEST_CASE("bernoulli of an array uses each element's probability", "[random]") {
  std::vector<float> probs(kN);
  for (std::int64_t i = 0; i < kN; ++i) probs[i] = i % 2 ? 0.8f : 0.1f;
  Array p = nf::array(probs);
  nf::seed(11);
  Array b = nf::bernoulli(p);
  REQUIRE(b.dtype() == nf::f32);
  REQUIRE(b.shape() == p.shape());
  const std::vector<float> v = b.to_vector<float>();
  double ones[2] = {0, 0}, count[2] = {0, 0};
  std::size_t others = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0.0f && v[i] != 1.0f) ++others;
    ones[i % 2] += v[i];
    count[i % 2] += 1;
  }
  CHECK(others == 0);
  CHECK(std::abs(ones[0] / count[0] - 0.1) < 5 * std::sqrt(0.1 * 0.9 / count[0]));
  CHECK(std::abs(ones[1] / count[1] - 0.8) < 5 * std::sqrt(0.8 * 0.2 / count[1]));

  // An integer probability gives f32; a f64 one f64.
  CHECK(nf::bernoulli(nf::ones({3}, nf::i32)).dtype() == nf::f32);
  CHECK(nf::bernoulli(nf::ones({3}, nf::i32)).to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK(nf::bernoulli(nf::zeros({3}, nf::f64)).dtype() == nf::f64);
  CHECK(nf::bernoulli(nf::zeros({3}, nf::f64)).to_vector<double>() == std::vector<double>{0, 0, 0});
}

TEST_CASE("rand_like and randn_like follow the shape and floating dtype", "[random]") {
  nf::seed(3);
  Array x = nf::zeros({211, 479}, nf::f64);
  Array u = nf::rand_like(x);
  Array g = nf::randn_like(x);
  CHECK(u.dtype() == nf::f64);
  CHECK(g.dtype() == nf::f64);
  CHECK(u.shape() == x.shape());
  CHECK(g.shape() == x.shape());
  const std::vector<double> uv = values(u), gv = values(g);
  const double n = double(uv.size());
  CHECK(std::abs(mean_of(uv) - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  CHECK(std::abs(mean_of(gv)) < 5 / std::sqrt(n));
  CHECK(ks_statistic(uv, uniform_cdf) < ks_bound(uv.size()));
  CHECK(ks_statistic(gv, normal_cdf) < ks_bound(gv.size()));

  CHECK(nf::rand_like(nf::zeros({2, 3}, nf::bf16)).dtype() == nf::bf16);
  CHECK(nf::randn_like(nf::zeros({2, 3}, nf::f16)).dtype() == nf::f16);
  // Integer and bool inputs give the default float.
  CHECK(nf::rand_like(nf::zeros({4}, nf::i64)).dtype() == nf::f32);
  CHECK(nf::randn_like(nf::zeros({4}, nf::bool_)).dtype() == nf::f32);
  // The argument may be an expression.
  CHECK(nf::rand_like(x + 1).shape() == x.shape());
}

TEST_CASE("sizes 0 and 1", "[random]") {
  nf::seed(1);
  CHECK(Array(nf::rand({0})).size() == 0);
  CHECK(Array(nf::randn({0}, nf::f64)).to_vector<double>().empty());
  CHECK(Array(nf::rand({3, 0, 2})).shape() == nf::Shape{3, 0, 2});
  CHECK(Array(nf::bernoulli({0}, 0.5)).size() == 0);

  nf::seed(1);
  Array one = nf::rand({1});
  const float v = one.item<float>();
  CHECK(v > 0.0f);
  CHECK(v <= 1.0f);
  CHECK(v == nf_rand_uniform_f32(1, 0, 0));
  Array scalar = nf::randn(nf::Shape{}, nf::f64);  // 0-d
  CHECK(scalar.ndim() == 0);
  CHECK(scalar.item<double>() == nf_rand_normal_f64(1, 1, 0));
}

TEST_CASE("invalid random requests throw", "[random]") {
  CHECK_THROWS_AS(nf::rand({3}, nf::i32), nf::DTypeError);
  CHECK_THROWS_AS(nf::randn({3}, nf::bool_), nf::DTypeError);
  CHECK_THROWS_AS(nf::rand({2, -1}), nf::ShapeError);
}

TEST_CASE("a seed reproduces its numbers", "[random]") {
  for (nf::DType dtype : {nf::f32, nf::f64}) {
    INFO("dtype " << nf::name(dtype));
    nf::seed(1234);
    const std::vector<double> a1 = values(nf::rand({kN}, dtype));
    const std::vector<double> b1 = values(nf::rand({kN}, dtype));
    const std::vector<double> n1 = values(nf::randn({kN}, dtype));
    nf::seed(1234);
    const std::vector<double> a2 = values(nf::rand({kN}, dtype));
    const std::vector<double> b2 = values(nf::rand({kN}, dtype));
    const std::vector<double> n2 = values(nf::randn({kN}, dtype));
    CHECK(same_bits(a1, a2));
    CHECK(same_bits(b1, b2));
    CHECK(same_bits(n1, n2));

    // Successive calls draw new streams: no element repeats in place.
    std::size_t equal = 0;
    for (std::size_t i = 0; i < a1.size(); ++i) equal += a1[i] == b1[i];
    CHECK(equal < 10);  // f32 values collide in place with probability ~2^-32

    nf::seed(1235);
    const std::vector<double> a3 = values(nf::rand({kN}, dtype));
    equal = 0;
    for (std::size_t i = 0; i < a1.size(); ++i) equal += a1[i] == a3[i];
    CHECK(equal < 10);
    // The high half of the seed is part of the key.
    nf::seed(1234 + (std::uint64_t{1} << 32));
    const std::vector<double> a4 = values(nf::rand({kN}, dtype));
    equal = 0;
    for (std::size_t i = 0; i < a1.size(); ++i) equal += a1[i] == a4[i];
    CHECK(equal < 10);
  }
}

TEST_CASE("a random expression gives the same values each time it is evaluated", "[random]") {
  nf::seed(8);
  const nf::Expr e = nf::rand({kN});
  const nf::Expr g = nf::randn({kN}, nf::f64);
  Array a1 = e;
  Array a2 = e;
  CHECK(same_bits(a1.to_vector<float>(), a2.to_vector<float>()));
  CHECK(same_bits(Array(g).to_vector<double>(), Array(g).to_vector<double>()));

  // Used twice in one statement, it is one set of values, not two draws.
  Array twice = e + e;
  Array diff = e - e;
  std::vector<float> doubled = a1.to_vector<float>();
  for (float& x : doubled) x *= 2;  // exact
  CHECK(same_bits(twice.to_vector<float>(), doubled));
  CHECK(same_bits(diff.to_vector<float>(), std::vector<float>(kN, 0.0f)));

  // Evaluating does not consume streams: the next call takes stream 2.
  Array next = nf::rand({kN});
  const std::vector<float> nv = next.to_vector<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < nv.size(); ++i) wrong += nv[i] != nf_rand_uniform_f32(8, 2, i);
  CHECK(wrong == 0);
}

TEST_CASE("the k-th random op after seed(s) uses stream k", "[random]") {
  const std::uint64_t s =
      GENERATE(std::uint64_t{0}, std::uint64_t{42}, std::uint64_t{0x0123456789abcdefull});
  INFO("seed " << s);
  nf::seed(s);
  // Each call takes a stream when it is built, evaluated or not.
  const nf::Expr unused = nf::rand({4});                    // stream 0
  Array u32 = nf::rand({3, 5});                             // stream 1
  Array n32 = nf::randn({kN});                              // stream 2
  Array u64 = nf::rand({7, 1, 3}, nf::f64);                 // stream 3
  Array n64 = nf::randn({kN}, nf::f64);                     // stream 4
  Array b = nf::bernoulli({kN}, 0.25);                      // stream 5
  Array ul = nf::rand_like(nf::zeros({2, 2, 2}, nf::f64));  // stream 6
  Array nl = nf::randn_like(nf::zeros({9}));                // stream 7
  Array bp = nf::bernoulli(nf::full({13}, 0.5, nf::f64));   // stream 8
  Array h = nf::rand({kN}, nf::bf16);                       // stream 9
  (void)unused;

  auto check_f32 = [&](const Array& a, std::uint64_t stream, bool normal) {
    const std::vector<float> v = a.to_vector<float>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float want =
          normal ? nf_rand_normal_f32(s, stream, i) : nf_rand_uniform_f32(s, stream, i);
      if (std::memcmp(&v[i], &want, sizeof want) != 0) ++wrong;
    }
    CHECK(wrong == 0);
  };
  auto check_f64 = [&](const Array& a, std::uint64_t stream, bool normal) {
    const std::vector<double> v = a.to_vector<double>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double want =
          normal ? nf_rand_normal_f64(s, stream, i) : nf_rand_uniform_f64(s, stream, i);
      if (std::memcmp(&v[i], &want, sizeof want) != 0) ++wrong;
    }
    CHECK(wrong == 0);
  };
  // Element i is the linear C-order index, whatever the shape.
  check_f32(u32, 1, false);
  check_f32(n32, 2, true);
  check_f64(u64, 3, false);
  check_f64(n64, 4, true);
  check_f64(ul, 6, false);
  check_f32(nl, 7, true);

  const std::vector<float> bv = b.to_vector<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bv.size(); ++i) {
    wrong += bv[i] != (nf_rand_uniform_f32(s, 5, i) <= 0.25f ? 1.0f : 0.0f);
  }
  CHECK(wrong == 0);
  const std::vector<double> bpv = bp.to_vector<double>();
  wrong = 0;
  for (std::size_t i = 0; i < bpv.size(); ++i) {
    wrong += bpv[i] != (nf_rand_uniform_f64(s, 8, i) <= 0.5 ? 1.0 : 0.0);
  }
  CHECK(wrong == 0);

  // bf16 stores the f32 value rounded to 8 significant bits: within 2^-8 relative.
  const std::vector<float> hv = h.to_vector<float>();
  wrong = 0;
  for (std::size_t i = 0; i < hv.size(); ++i) {
    const float want = nf_rand_uniform_f32(s, 9, i);
    wrong += std::abs(hv[i] - want) > want * 0x1p-8f;
  }
  CHECK(wrong == 0);

  // seed() restarts the streams at 0.
  nf::seed(s);
  Array first = nf::rand({5});
  check_f32(first, 0, false);
}

TEST_CASE("f32 random values do not depend on the CPU compute dtype", "[cpu-backend][random]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  ComputeDtypeGuard guard;
  nf::set_cpu_compute_dtype(nf::f32);
  nf::seed(21);
  const std::vector<float> u1 = Array(nf::rand({1001})).to_vector<float>();
  const std::vector<float> n1 = Array(nf::randn({1001})).to_vector<float>();
  nf::set_cpu_compute_dtype(nf::f64);
  nf::seed(21);
  const std::vector<float> u2 = Array(nf::rand({1001})).to_vector<float>();
  const std::vector<float> n2 = Array(nf::randn({1001})).to_vector<float>();
  CHECK(same_bits(u1, u2));
  CHECK(same_bits(n1, n2));
}

TEST_CASE("permutation: every index once, in an order the seed repeats on every backend",
          "[random]") {
  constexpr std::int64_t n = 1000;
  nf::seed(99);
  const nf::Array p = nf::permutation(n);
  CHECK(p.dtype() == nf::i64);
  CHECK(p.shape() == nf::Shape{n});
  const std::vector<std::int64_t> order = p.to_vector<std::int64_t>();
  std::vector<std::int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> identity(std::size_t(n), 0);
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = std::int64_t(i);
  CHECK(sorted == identity);
  // A random order leaves about one index of the 1000 in place.
  std::size_t fixed = 0;
  for (std::size_t i = 0; i < order.size(); ++i) fixed += order[i] == std::int64_t(i);
  CHECK(fixed < 10);

  nf::seed(99);
  std::vector<std::int64_t> on_cpu;
  {
    nf::test::OnDevice cpu(nf::Device::cpu());
    on_cpu = nf::permutation(n).to_vector<std::int64_t>();
  }
  CHECK(on_cpu == order);
  nf::seed(100);
  CHECK(nf::permutation(n).to_vector<std::int64_t>() != order);

  CHECK(nf::permutation(0).shape() == nf::Shape{0});
  CHECK(nf::permutation(1).to_vector<std::int64_t>() == std::vector<std::int64_t>{0});
  CHECK_THROWS_AS(nf::permutation(-1), nf::ValueError);
}
