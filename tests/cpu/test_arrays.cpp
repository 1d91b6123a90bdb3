// Arrays: creation, views that share storage, and numpy's assignment rules.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"

using Catch::Matchers::Equals;
using nf::Array;
using V = std::vector<double>;

namespace {
// 0, 1, ..., n-1 as f64 in `shape`.
Array ramp(const nf::Shape& shape) {
  return nf::arange(0.0, double(nf::numel(shape)), 1.0, nf::f64).reshape(shape);
}
}  // namespace

TEST_CASE("creation functions give numpy's values and dtypes", "[arrays]") {
  CHECK(nf::zeros({2, 3}).dtype() == nf::f32);
  CHECK_THAT(nf::zeros({2, 2}).to_vector<double>(), Equals(V{0, 0, 0, 0}));
  CHECK_THAT(nf::ones({3}, nf::i32).to_vector<double>(), Equals(V{1, 1, 1}));
  CHECK_THAT(nf::full({2}, 2.5, nf::f64).to_vector<double>(), Equals(V{2.5, 2.5}));
  CHECK_THAT(nf::eye(3).to_vector<double>(), Equals(V{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Array r = nf::arange(5);
  CHECK(r.dtype() == nf::i64);
  CHECK_THAT(r.to_vector<double>(), Equals(V{0, 1, 2, 3, 4}));
  CHECK_THAT(nf::arange(2, 11, 3).to_vector<double>(), Equals(V{2, 5, 8}));
  CHECK_THAT(nf::arange(5, 0, -2).to_vector<double>(), Equals(V{5, 3, 1}));
  CHECK(nf::arange(0.0, 1.0, 0.25).dtype() == nf::f32);
  CHECK_THAT(nf::arange(0.0, 1.0, 0.25).to_vector<double>(), Equals(V{0, 0.25, 0.5, 0.75}));
  CHECK(nf::arange(3, 3).size() == 0);
  Array l = nf::linspace(0.0, 1.0, 5, nf::f64);
  CHECK_THAT(l.to_vector<double>(), Equals(V{0, 0.25, 0.5, 0.75, 1.0}));
  CHECK(nf::linspace(0.1, 0.7, 7, nf::f64).to_vector<double>().back() == 0.7);
  CHECK(nf::linspace(2.0, 3.0, 1, nf::f64).to_vector<double>() == V{2.0});
  CHECK(nf::empty({4, 0}).size() == 0);
  CHECK(Array().size() == 0);
}

TEST_CASE("array() copies host data and checks its length", "[arrays]") {
  std::vector<std::int32_t> data{1, -2, 3, 4, 5, 6};
  Array a = nf::array(data, {2, 3});
  data[0] = 100;  // a owns a copy
  CHECK(a.dtype() == nf::i32);
  CHECK(a.shape() == nf::Shape{2, 3});
  CHECK_THAT(a.to_vector<std::int32_t>(), Equals(std::vector<std::int32_t>{1, -2, 3, 4, 5, 6}));
  CHECK_THROWS_AS(nf::array(data, {4, 2}), nf::ShapeError);
  Array b = nf::array(std::vector<bool>{true, false, true});
  CHECK(b.dtype() == nf::bool_);
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(nf::array(std::vector<float>{2.5f}, nf::Shape{}).item<float>() == 2.5f);
}

TEST_CASE("slices are views with numpy's start:stop:step rules", "[arrays]") {
  Array a = ramp({4, 5});
  CHECK_THAT(a(1).to_vector<double>(), Equals(V{5, 6, 7, 8, 9}));
  CHECK(a(1).ndim() == 1);
  CHECK_THAT(a(-1, -2).to_vector<double>(), Equals(V{18}));
  CHECK(a(-1, -2).ndim() == 0);
  CHECK_THAT(a(nf::all, 1).to_vector<double>(), Equals(V{1, 6, 11, 16}));
  CHECK_THAT(a(nf::slice(1, 3), nf::slice(nf::none, nf::none, 2)).to_vector<double>(),
             Equals(V{5, 7, 9, 10, 12, 14}));
  CHECK_THAT(a(0, nf::slice(nf::none, nf::none, -1)).to_vector<double>(), Equals(V{4, 3, 2, 1, 0}));
  CHECK_THAT(a(0, nf::slice(-2, nf::none)).to_vector<double>(), Equals(V{3, 4}));
  CHECK_THAT(a(0, nf::slice(3, 1, -1)).to_vector<double>(), Equals(V{3, 2}));
  CHECK_THAT(a(0, nf::slice(-100, 100)).to_vector<double>(), Equals(V{0, 1, 2, 3, 4}));
  CHECK(a(nf::slice(3, 1)).shape() == nf::Shape{0, 5});
  CHECK(a(nf::slice(1, 3)).storage() == a.storage());
  CHECK_THROWS_AS(a(4), nf::ShapeError);
  CHECK_THROWS_AS(a(0, -6), nf::ShapeError);
  CHECK_THROWS_AS(a(0, 0, 0), nf::ShapeError);
  CHECK_THROWS_AS(a(nf::slice(0, 2, 0)), nf::ShapeError);
}

TEST_CASE("writing through a view writes the original", "[arrays]") {
  Array a = nf::zeros({3, 4}, nf::f64);
  a(nf::all, nf::slice(0, 2)) = nf::ones({3, 2}, nf::f64) * 7;
  a(1) = 2;  // a scalar broadcasts, as in numpy
  a(2, nf::slice(nf::none, nf::none, -1)) = nf::arange(0.0, 4.0, 1.0, nf::f64);  // reversed view
  CHECK_THAT(a.to_vector<double>(), Equals(V{7, 7, 0, 0, 2, 2, 2, 2, 3, 2, 1, 0}));
  Array i = nf::zeros({3}, nf::i32);
  i(nf::slice(0, 2)) = 2.75;  // setitem casts unsafely, like numpy
  CHECK_THAT(i.to_vector<double>(), Equals(V{2, 2, 0}));
}

TEST_CASE("copying an Array shares storage, assignment rebinds", "[arrays]") {
  Array a = nf::ones({3}, nf::f64);
  Array b = a;         // shares
  Array c = a.copy();  // owns
  a += 1;              // in place: visible through b
  CHECK_THAT(b.to_vector<double>(), Equals(V{2, 2, 2}));
  CHECK_THAT(c.to_vector<double>(), Equals(V{1, 1, 1}));
  a = a * 10;  // rebinds a; b keeps the old buffer, as numpy's `a = a * 10`
  CHECK_THAT(a.to_vector<double>(), Equals(V{20, 20, 20}));
  CHECK_THAT(b.to_vector<double>(), Equals(V{2, 2, 2}));
  Array v = a(nf::slice(1, 3));
  v *= 2;  // in place through a view
  CHECK_THAT(a.to_vector<double>(), Equals(V{20, 40, 40}));
  v /= 4;
  v -= 1;
  CHECK_THAT(a.to_vector<double>(), Equals(V{20, 9, 9}));
}

TEST_CASE("assignment reuses a buffer only its target holds", "[arrays]") {
  const Array x = ramp({2, 3});
  Array y = nf::zeros({2, 3}, nf::f64);
  const auto* buffer = y.storage().get();
  y = x * 2;  // nothing else sees y's buffer, which fits: the statement writes into it
  CHECK(y.storage().get() == buffer);
  CHECK_THAT(y.to_vector<double>(), Equals(V{0, 2, 4, 6, 8, 10}));

  // Held elsewhere, the buffer stays as it was and `y` is rebound.
  const Array held = y;
  y = x + 1;
  CHECK(y.storage().get() != buffer);
  CHECK_THAT(held.to_vector<double>(), Equals(V{0, 2, 4, 6, 8, 10}));
  CHECK_THAT(y.to_vector<double>(), Equals(V{1, 2, 3, 4, 5, 6}));
  buffer = y.storage().get();
  y = y * 10;  // read by the statement itself
  CHECK(y.storage().get() != buffer);
  CHECK_THAT(y.to_vector<double>(), Equals(V{10, 20, 30, 40, 50, 60}));

  // A buffer that is not exactly a new result's is not reused either.
  buffer = y.storage().get();
  y = nf::astype(x, nf::f32);  // another dtype
  CHECK(y.storage().get() != buffer);
  CHECK(y.dtype() == nf::f32);
  buffer = y.storage().get();
  y = x.reshape({3, 2}) * 1;  // another shape
  CHECK(y.storage().get() != buffer);
  CHECK(y.shape() == nf::Shape{3, 2});
  Array part = ramp({4, 3})(nf::slice(0, 2));  // the first rows of a larger buffer
  buffer = part.storage().get();
  part = x - 1;
  CHECK(part.storage().get() != buffer);
  CHECK_THAT(part.to_vector<double>(), Equals(V{-1, 0, 1, 2, 3, 4}));
  Array t = ramp({3, 2}).T();  // strided
  buffer = t.storage().get();
  t = x * 3;
  CHECK(t.storage().get() != buffer);
  CHECK(t.strides() == nf::Strides{3, 1});
  CHECK_THAT(t.to_vector<double>(), Equals(V{0, 3, 6, 9, 12, 15}));
}

TEST_CASE("in-place updates read before they write", "[arrays]") {
  Array a = ramp({3, 3});
  a += a.T();
  CHECK_THAT(a.to_vector<double>(), Equals(V{0, 4, 8, 4, 8, 12, 8, 12, 16}));
  Array b = ramp({2, 3});
  b(nf::all, nf::slice(1, nf::none)) = b(nf::all, nf::slice(nf::none, 2));  // overlapping shift
  CHECK_THAT(b.to_vector<double>(), Equals(V{0, 0, 1, 3, 3, 4}));
}

TEST_CASE("transpose, reshape, squeeze, expand_dims and broadcast_to", "[arrays]") {
  Array a = ramp({2, 3});
  Array t = a.T();
  CHECK(t.shape() == nf::Shape{3, 2});
  CHECK(t.storage() == a.storage());
  CHECK_FALSE(t.is_contiguous());
  CHECK_THAT(t.to_vector<double>(), Equals(V{0, 3, 1, 4, 2, 5}));
  Array r = a.reshape({3, -1});
  CHECK(r.shape() == nf::Shape{3, 2});
  CHECK(r.storage() == a.storage());  // contiguous: a view
  Array rt = t.reshape({6});          // not viewable: a copy in C order
  CHECK(rt.storage() != a.storage());
  CHECK_THAT(rt.to_vector<double>(), Equals(V{0, 3, 1, 4, 2, 5}));
  CHECK_THROWS_AS(a.reshape({4, -1}), nf::ShapeError);
  Array x = ramp({3, 1, 2, 1});
  CHECK(x.squeeze().shape() == nf::Shape{3, 2});
  CHECK(x.squeeze(1).shape() == nf::Shape{3, 2, 1});
  CHECK_THROWS_AS(x.squeeze(0), nf::ShapeError);
  CHECK(a.expand_dims(0).shape() == nf::Shape{1, 2, 3});
  CHECK(a.expand_dims(-1).shape() == nf::Shape{2, 3, 1});
  Array b = nf::arange(0.0, 3.0, 1.0, nf::f64).broadcast_to({2, 3});
  CHECK_THAT(b.to_vector<double>(), Equals(V{0, 1, 2, 0, 1, 2}));
  CHECK_THROWS_AS(a.broadcast_to({3, 3}), nf::ShapeError);
  CHECK(ramp({2, 3, 4}).transpose({1, 2, 0}).shape() == nf::Shape{3, 4, 2});
  CHECK_THROWS_AS(a.transpose({0, 0}), nf::ShapeError);
}

TEST_CASE("reshapes of views not in C order copy them, alone and inside expressions", "[arrays]") {
  // Found on a GPU: a.T().reshape({6}) aborted with "free(): invalid pointer".
  for (nf::DType t : {nf::f64, nf::f32, nf::f16, nf::i32, nf::u8}) {
    INFO(nf::name(t));
    const Array a = ramp({2, 3}).astype(t);
    CHECK_THAT(a.T().reshape({6}).to_vector<double>(), Equals(V{0, 3, 1, 4, 2, 5}));
    CHECK_THAT(Array(a.T().reshape({3, 2}) + 1).to_vector<double>(), Equals(V{1, 4, 2, 5, 3, 6}));
    CHECK_THAT(Array(nf::reshape(a.T(), {2, 3}) * 2).to_vector<double>(),
               Equals(V{0, 6, 2, 8, 4, 10}));
    const Array stepped = ramp({3, 4}).astype(t)(nf::all, nf::slice(0, nf::none, 2));
    CHECK_THAT(stepped.reshape({6}).to_vector<double>(), Equals(V{0, 2, 4, 6, 8, 10}));
    const Array wide = a(0, nf::all).broadcast_to({2, 3});
    CHECK_THAT(Array(nf::reshape(wide, {3, 2})).to_vector<double>(), Equals(V{0, 1, 2, 0, 1, 2}));
  }
  const Array c = ramp({2, 3, 4}).transpose({2, 0, 1});
  CHECK_THAT(Array(nf::sum(c.reshape({4, 6}), 1)).to_vector<double>(), Equals(V{60, 66, 72, 78}));
}

TEST_CASE("shape functions on expressions", "[arrays]") {
  Array a = ramp({2, 3});
  Array s = nf::squeeze(nf::sum(a, 1));
  CHECK(s.shape() == nf::Shape{2});
  CHECK_THAT(s.to_vector<double>(), Equals(V{3, 12}));
  CHECK_THAT(Array(nf::transpose(a + 0)).to_vector<double>(), Equals(V{0, 3, 1, 4, 2, 5}));
  CHECK_THAT(Array(nf::reshape(a.T() * 1, {6})).to_vector<double>(), Equals(V{0, 3, 1, 4, 2, 5}));
  CHECK(Array(nf::expand_dims(a * 2, 1)).shape() == nf::Shape{2, 1, 3});
  CHECK_THAT(Array(nf::broadcast_to(nf::sum(a, 0), {2, 3})).to_vector<double>(),
             Equals(V{3, 5, 7, 3, 5, 7}));
}

TEST_CASE("reads: to_vector converts, item needs one element", "[arrays]") {
  Array a = nf::array(std::vector<double>{1.5, -2.5, 0.0}).astype(nf::f16);
  CHECK_THAT(a.to_vector<float>(), Equals(std::vector<float>{1.5f, -2.5f, 0.0f}));
  CHECK(a.to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(nf::sum(a).item<double>() == -1.0);
  CHECK_THROWS_AS(a.item<double>(), nf::ValueError);
}

TEST_CASE("nf::eval runs several outputs of one statement", "[arrays]") {
  Array g = ramp({4});
  Array m = nf::ones({4}, nf::f64);
  auto [m2, v2] = nf::eval(0.9 * m + 0.1 * g, g * g);
  CHECK_THAT(m2.to_vector<double>(), Equals(V{0.9, 1.0, 0.9 + 0.2, 0.9 + 0.30000000000000004}));
  CHECK_THAT(v2.to_vector<double>(), Equals(V{0, 1, 4, 9}));
  std::vector<Array> outs = nf::eval({nf::Expr(g) + 1});
  CHECK_THAT(outs.at(0).to_vector<double>(), Equals(V{1, 2, 3, 4}));
}

TEST_CASE("nf::eval writes a value asked for twice into each output", "[arrays]") {
  nf::seed(19);
  Array x = nf::astype(nf::randn({31, 17}) * 2, nf::f16);
  Array flags = nf::rand({17, 17}) < 0.5;
  // astype to its own dtype is x itself: roots 0 and 2 are one node, beside
  // a reduction that makes the statement more than one copy.
  auto [same, counts, again] = nf::eval(nf::astype(x, nf::f16), nf::sum(flags, 0), x);
  const std::vector<float> want = x.to_vector<float>();
  CHECK(same.to_vector<float>() == want);
  CHECK(again.to_vector<float>() == want);
  const std::vector<bool> f = flags.to_vector<bool>();
  std::vector<std::int64_t> column_counts(17, 0);
  for (std::size_t i = 0; i < f.size(); ++i) column_counts[i % 17] += f[i];
  CHECK(counts.to_vector<std::int64_t>() == column_counts);
  // Two equal expressions merge into one node too.
  auto [p, q] = nf::eval(nf::exp(x.astype(nf::f32)) + 1, nf::exp(x.astype(nf::f32)) + 1);
  const std::vector<float> e = Array(nf::exp(x.astype(nf::f32)) + 1).to_vector<float>();
  CHECK(p.to_vector<float>() == e);
  CHECK(q.to_vector<float>() == e);
}

TEST_CASE("set_cpu_compute_dtype(f64) computes f32 work in double", "[cpu-backend][arrays]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  Array big = nf::full({1}, 1e8, nf::f32);
  Array one = nf::ones({1}, nf::f32);
  // 1e8 + 1 is not a float: in f32 the sum rounds back to 1e8.
  CHECK(Array((big + one) - big).item<float>() == 0.0f);
  nf::set_cpu_compute_dtype(nf::f64);
  const float wide = Array((big + one) - big).item<float>();
  nf::set_cpu_compute_dtype(nf::f32);
  CHECK(wide == 1.0f);
  CHECK(Array((big + one) - big).dtype() == nf::f32);
  CHECK_THROWS_AS(nf::set_cpu_compute_dtype(nf::i32), nf::DTypeError);
}
