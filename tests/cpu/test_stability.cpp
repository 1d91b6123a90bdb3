// var, std and logsumexp stay accurate where naive formulas fail.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include <numfuse/numfuse.hpp>

// Each walk takes its elements in another order and meets its partial
// results in another way: held and long rows (split across blocks on a GPU,
// cut into tasks on the CPU), columns, and all elements at once.
TEST_CASE("var and std of f32 with mean 1e4 and std 1e-2, over rows, columns and all",
          "[stability]") {
  enum Over { rows, columns, all };
  struct Case {
    int rows, cols;
    Over over;
  };
  const Case c = GENERATE(Case{8, 4099, rows}, Case{2, 1 << 20, rows}, Case{4099, 8, columns},
                          Case{1024, 1024, all});
  INFO(c.rows << "x" << c.cols << " over "
              << (c.over == rows      ? "rows"
                  : c.over == columns ? "columns"
                                      : "all"));
  std::mt19937 gen(7);
  std::normal_distribution<double> dist(1e4, 1e-2);
  std::vector<float> data(std::size_t(c.rows) * c.cols);
  for (auto& x : data) x = float(dist(gen));
  nf::Array a = nf::array(data, {c.rows, c.cols});
  const std::vector<int> axes = c.over == rows      ? std::vector<int>{1}
                                : c.over == columns ? std::vector<int>{0}
                                                    : std::vector<int>{0, 1};
  const std::vector<float> var = nf::Array(nf::var(a, axes)).to_vector<float>();
  const std::vector<float> sd = nf::Array(nf::std(a, axes)).to_vector<float>();
  const std::vector<float> var1 = nf::Array(nf::var(a, axes, 1)).to_vector<float>();
  // Output o's element j, and how many each output takes.
  const int outputs = c.over == rows ? c.rows : c.over == columns ? c.cols : 1;
  const int n = int(data.size()) / outputs;
  const auto at = [&](int o, int j) {
    return double(c.over == columns ? data[std::size_t(j) * c.cols + o]
                                    : data[std::size_t(o) * n + j]);
  };
  REQUIRE(var.size() == std::size_t(outputs));
  for (int o = 0; o < outputs; ++o) {
    // Reference: two passes in double over the stored f32 values.
    double m = 0, s = 0;
    for (int j = 0; j < n; ++j) m += at(o, j);
    m /= n;
    for (int j = 0; j < n; ++j) s += (at(o, j) - m) * (at(o, j) - m);
    INFO("output " << o);
    CHECK(var[o] == Approx(s / n).epsilon(1e-3));
    CHECK(sd[o] == Approx(std::sqrt(s / n)).epsilon(1e-3));
    CHECK(var1[o] == Approx(s / (n - 1)).epsilon(1e-3));
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
