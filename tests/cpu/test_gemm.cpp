// dot and matmul against hand-written loops in double.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include <numfuse/numfuse.hpp>

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
