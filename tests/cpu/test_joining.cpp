// nf::concatenate and nf::stack against the same joins done on host vectors
// by index arithmetic; numpy's promotion, views and expressions as
// operands, and the errors of operands that do not fit.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"

namespace {

using nf::test::message_of;

std::vector<double> values_of(const nf::Array& a) {
  return nf::Array(nf::astype(a, nf::f64)).to_vector<double>();
}

// The element at (i, j) of a row-major (rows, cols) block.
double at(const std::vector<double>& v, std::int64_t cols, std::int64_t i, std::int64_t j) {
  return v[std::size_t(i * cols + j)];
}

}  // namespace

TEST_CASE("concatenate: 2-D arrays along either axis, as index arithmetic joins them", "[join]") {
  const nf::Array a = nf::randn({3, 4}), b = nf::randn({2, 4}), c = nf::randn({3, 5});
  const std::vector<double> va = values_of(a), vb = values_of(b), vc = values_of(c);

  const nf::Array rows = nf::concatenate({a, b});
  CHECK(rows.shape() == nf::Shape{5, 4});
  CHECK(rows.dtype() == nf::f32);
  std::vector<double> want;
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      want.push_back(i < 3 ? at(va, 4, i, j) : at(vb, 4, i - 3, j));
  CHECK(values_of(rows) == want);

  for (int axis : {1, -1}) {
    const nf::Array cols = nf::concatenate({a, c}, axis);
    CHECK(cols.shape() == nf::Shape{3, 9});
    want.clear();
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 9; ++j)
        want.push_back(j < 4 ? at(va, 4, i, j) : at(vc, 5, i, j - 4));
    CHECK(values_of(cols) == want);
  }
}

TEST_CASE("concatenate: dtypes promote as numpy's, views and expressions join", "[join]") {
  const nf::Array i = nf::array(std::vector<std::int32_t>{1, -2, 3});
  const nf::Array f = nf::array(std::vector<float>{0.5f, 1.5f});
  const nf::Array h = nf::astype(nf::array(std::vector<float>{2.f}), nf::f16);
  const nf::Array joined = nf::concatenate({i, f, h});
  CHECK(joined.dtype() == nf::f64);  // i32 with f32 gives f64 in NumPy 2
  CHECK(values_of(joined) == std::vector<double>{1, -2, 3, 0.5, 1.5, 2});
  CHECK(nf::concatenate({h, f}).dtype() == nf::f32);

  const nf::Array m = nf::randn({4, 3});
  const std::vector<double> vm = values_of(m);
  // m.T() is a view; m * 2 an expression: each is read as it is.
  const nf::Array j = nf::concatenate({m.T(), m.T() * 2.0}, 1);
  CHECK(j.shape() == nf::Shape{3, 8});
  std::vector<double> want;
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t c = 0; c < 8; ++c) want.push_back((c < 4 ? 1.0 : 2.0) * at(vm, 3, c % 4, r));
  CHECK(values_of(j) == want);
}

TEST_CASE("stack: a new axis anywhere, of arrays of one shape", "[join]") {
  const nf::Array a = nf::randn({2, 3}), b = nf::randn({2, 3});
  const std::vector<double> va = values_of(a), vb = values_of(b);
  const nf::Array s0 = nf::stack({a, b});
  CHECK(s0.shape() == nf::Shape{2, 2, 3});
  std::vector<double> want = va;
  want.insert(want.end(), vb.begin(), vb.end());
  CHECK(values_of(s0) == want);

  for (int axis : {2, -1}) {
    const nf::Array s2 = nf::stack({a, b}, axis);
    CHECK(s2.shape() == nf::Shape{2, 3, 2});
    want.clear();
    for (std::size_t k = 0; k < va.size(); ++k) {
      want.push_back(va[k]);
      want.push_back(vb[k]);
    }
    CHECK(values_of(s2) == want);
  }
  const nf::Array s1 = nf::stack({a, b}, 1);
  CHECK(s1.shape() == nf::Shape{2, 2, 3});
  CHECK(values_of(s1(1, 0, nf::all)) == values_of(a(1, nf::all)));
  CHECK(values_of(s1(1, 1, nf::all)) == values_of(b(1, nf::all)));

  const nf::Array scalars = nf::stack({nf::array(std::vector<float>{1.f}, nf::Shape{}),
                                       nf::array(std::vector<float>{2.f}, nf::Shape{})});
  CHECK(scalars.shape() == nf::Shape{2});
  CHECK(values_of(scalars) == std::vector<double>{1, 2});
}

TEST_CASE("concatenate and stack: operands that do not fit are refused, naming them", "[join]") {
  const nf::Array a = nf::randn({3, 4}), b = nf::randn({3, 5});
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               nf::concatenate({a, b});
             }),
             Catch::Contains("axis 0") && Catch::Contains("(3, 4), (3, 5)"));
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               nf::concatenate({a, nf::randn({4})});
             }),
             Catch::Contains("(3, 4), (4,)"));
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               nf::concatenate({a, a}, 2);
             }),
             Catch::Contains("axis 2 is out of range"));
  CHECK_THAT(message_of<nf::ShapeError>(
                 [&] { nf::concatenate({nf::array(std::vector<float>{1.f}, nf::Shape{})}); }),
             Catch::Contains("0-d arrays cannot be concatenated"));
  CHECK_THAT(message_of<nf::ValueError>([&] { nf::concatenate({}); }),
             Catch::Contains("at least one array"));
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               nf::stack({a, b});
             }),
             Catch::Contains("one shape; got (3, 4), (3, 5)"));
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               nf::stack({a, a}, 3);
             }),
             Catch::Contains("axis 3 is out of range"));
  CHECK_THAT(message_of<nf::ValueError>([&] { nf::stack({}); }),
             Catch::Contains("at least one array"));
}
