// var, std and logsumexp stay accurate where naive formulas fail.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include <numfuse/numfuse.hpp>

TEST_CASE("var and std of f32 rows with mean 1e4 and std 1e-2", "[stability]") {
  const int rows = 8, cols = 4099;
  std::mt19937 gen(7);
  std::normal_distribution<double> dist(1e4, 1e-2);
  std::vector<float> data(rows * cols);
  for (auto& x : data) x = float(dist(gen));
  nf::Array a = nf::array(data, {rows, cols});
  const std::vector<float> var = nf::Array(nf::var(a, 1)).to_vector<float>();
  const std::vector<float> sd = nf::Array(nf::std(a, 1)).to_vector<float>();
  const std::vector<float> var1 = nf::Array(nf::var(a, 1, 1)).to_vector<float>();
  for (int r = 0; r < rows; ++r) {
    // Reference: two passes in double over the stored f32 values.
    double m = 0, s = 0;
    for (int j = 0; j < cols; ++j) m += data[r * cols + j];
    m /= cols;
    for (int j = 0; j < cols; ++j) s += (data[r * cols + j] - m) * (data[r * cols + j] - m);
    INFO("row " << r);
    CHECK(var[r] == Approx(s / cols).epsilon(1e-3));
    CHECK(sd[r] == Approx(std::sqrt(s / cols)).epsilon(1e-3));
    CHECK(var1[r] == Approx(s / (cols - 1)).epsilon(1e-3));
  }
}

TEST_CASE("the mission line normalises rows with a large mean", "[stability]") {
  const int rows = 4, cols = 1000;
  nf::seed(3);
  nf::Array a = nf::randn({rows, cols}) * 1e-2 + 1e4;
  const float eps = 1e-9f;  // far below the variance, 1e-4
  a = nf::reciprocal(nf::sqrt(nf::var(a, 1) + eps)) * (a - nf::mean(a, 1));
  const std::vector<float> v = a.to_vector<float>();
  for (int r = 0; r < rows; ++r) {
    double m = 0, s = 0;
    for (int j = 0; j < cols; ++j) m += v[r * cols + j];
    m /= cols;
    for (int j = 0; j < cols; ++j) s += (v[r * cols + j] - m) * (v[r * cols + j] - m);
    // The f32 mean is within half an ulp of 1e4 (4.9e-4), 0.05 of the spread.
    CHECK(std::abs(m) < 0.05);
    CHECK(s / cols == Approx(1.0).epsilon(1e-2));
  }
}

TEST_CASE("logsumexp does not overflow or underflow", "[stability]") {
  nf::Array a =
      nf::array(std::vector<float>{1000.f, 1000.f, -1000.f, -1000.f, 0.f, -1e30f}, {3, 2});
  const std::vector<float> r = nf::Array(nf::logsumexp(a, 1)).to_vector<float>();
  CHECK(r[0] == Approx(1000.0 + std::log(2.0)));
  CHECK(r[1] == Approx(-1000.0 + std::log(2.0)));
  CHECK(r[2] == Approx(0.0).margin(1e-6));
  nf::Array inf = nf::array(std::vector<float>{-INFINITY, -INFINITY});
  CHECK(std::isinf(nf::Array(nf::logsumexp(inf)).item<float>()));
}
