// nf::take, nf::extract and nf::compress against the same selections done on
// host vectors by index arithmetic: every axis, indices of every rank, every
// index dtype and element dtype, negative and repeated indices, numpy's
// three modes, views and expressions as operands, a consumer after the
// gather, a shuffle in place, and the errors of indices that do not fit.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"
#include "../on_device.hpp"

#include "emulated_program.hpp"

namespace {

using nf::test::message_of;

std::vector<double> values_of(const nf::Expr& a) {
  return nf::Array(nf::astype(a, nf::f64)).to_vector<double>();
}

nf::Array indices(const std::vector<std::int64_t>& v, nf::DType t = nf::i64) {
  return nf::astype(nf::array(v), t);
}

// numpy's take of a C-order block of `shape` along `axis` at `idx` (already
// in range), by index arithmetic.
std::vector<double> taken(const std::vector<double>& a, const nf::Shape& shape, int axis,
                          const std::vector<std::int64_t>& idx) {
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (std::size_t d = std::size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t n = shape[axis];
  std::vector<double> out;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t v : idx)
      for (std::int64_t i = 0; i < inner; ++i)
        out.push_back(a[std::size_t((o * n + (v < 0 ? v + n : v)) * inner + i)]);
  return out;
}

}  // namespace

TEST_CASE("take: every axis of a 3-D array, negative and repeated indices", "[take]") {
  const nf::Shape shape{4, 5, 6};
  const nf::Array a = nf::randn(shape);
  const std::vector<double> va = values_of(a);
  for (int axis = 0; axis < 3; ++axis) {
    const std::vector<std::int64_t> idx{2, -1, 0, 2, 3, -4};
    INFO("axis " << axis);
    const nf::Array t = nf::take(a, indices(idx), axis);
    nf::Shape want_shape = shape;
    want_shape[std::size_t(axis)] = 6;
    CHECK(t.shape() == want_shape);
    CHECK(t.dtype() == nf::f32);
    CHECK(values_of(t) == taken(va, shape, axis, idx));
    CHECK(values_of(nf::take(a, indices(idx), axis - 3)) == taken(va, shape, axis, idx));
  }
}

TEST_CASE("take: indices of rank 0 to 2, and of a flattened array", "[take]") {
  const nf::Array a = nf::randn({3, 7});
  const std::vector<double> va = values_of(a);
  // (2, 2) indices along axis 1: shape (3, 2, 2), the indices' dims in the middle.
  const nf::Array idx2 = nf::reshape(indices({6, 0, -2, 1}, nf::i32), {2, 2});
  const nf::Array t2 = nf::take(a, idx2, 1);
  CHECK(t2.shape() == nf::Shape{3, 2, 2});
  CHECK(values_of(t2) == taken(va, {3, 7}, 1, {6, 0, -2, 1}));
  // One index drops the axis, as numpy's.
  const nf::Array t0 = nf::take(a, nf::reshape(indices({2}), {}), 0);
  CHECK(t0.shape() == nf::Shape{7});
  CHECK(values_of(t0) == taken(va, {3, 7}, 0, {2}));
  // Without an axis, a is read flattened.
  const nf::Array flat = nf::take(a, indices({20, 0, 7, -1}));
  CHECK(flat.shape() == nf::Shape{4});
  CHECK(values_of(flat) == std::vector<double>{va[20], va[0], va[7], va[20]});
  // No indices, no elements.
  CHECK(nf::take(a, indices({}), 1).shape() == nf::Shape{3, 0});
}

TEST_CASE("take: every element dtype and index dtype", "[take]") {
  const nf::Array base = nf::round(nf::randn({5, 4}) * 20.0);
  const std::vector<double> vb = values_of(base);
  const std::vector<std::int64_t> idx{4, 1, 1, 0};
  for (nf::DType t : {nf::f16, nf::bf16, nf::f32, nf::f64, nf::i32, nf::i64, nf::u8, nf::bool_}) {
    for (nf::DType it : {nf::i32, nf::i64, nf::u8}) {
      INFO(nf::name(t) << " at " << nf::name(it) << " indices");
      const nf::Array a = nf::astype(base, t);
      const nf::Array got = nf::take(a, indices(idx, it), 0);
      CHECK(got.dtype() == t);
      CHECK(values_of(got) == taken(values_of(a), {5, 4}, 0, idx));
    }
  }
}

TEST_CASE("take: numpy's wrap and clip modes place indices out of range", "[take]") {
  const nf::Array a = nf::randn({5});
  const std::vector<double> va = values_of(a);
  const nf::Array idx = indices({-7, -1, 5, 12, 2});
  CHECK(values_of(nf::take(a, idx, 0, nf::TakeMode::wrap)) ==
        std::vector<double>{va[3], va[4], va[0], va[2], va[2]});
  CHECK(values_of(nf::take(a, idx, 0, nf::TakeMode::clip)) ==
        std::vector<double>{va[0], va[0], va[4], va[4], va[2]});
}

TEST_CASE("take: views and expressions as operands, a consumer after the gather", "[take]") {
  const nf::Array m = nf::randn({4, 6});
  const std::vector<double> vm = values_of(m);
  const std::vector<std::int64_t> idx{5, 0, 3};
  // m.T() is a view, read through its strides.
  std::vector<double> want_t;
  for (std::int64_t v : idx)
    for (std::int64_t r = 0; r < 4; ++r) want_t.push_back(vm[std::size_t(r * 6 + v)]);
  CHECK(values_of(nf::take(m.T(), indices(idx), 0)) == want_t);
  // An expression is computed first; a consumer reads the gathered values.
  const nf::Expr e = nf::take(m * 2.0f + 1.0f, indices(idx), 1) * 3.0f;
  const std::vector<double> got = values_of(e);
  const std::vector<double> rows = taken(vm, {4, 6}, 1, idx);
  REQUIRE(got.size() == rows.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i] == Approx((float(rows[i]) * 2.0f + 1.0f) * 3.0f).epsilon(1e-6));
  }
  const nf::Plan p = nf::plan({e});
  INFO(p.to_string());
  CHECK(p.to_string().find("gather") != std::string::npos);
}

TEST_CASE("take: shuffling the rows of an array in place with a permutation", "[take]") {
  nf::seed(11);
  nf::Array x = nf::randn({9, 5});
  const std::vector<double> before = values_of(x);
  const nf::Array perm = nf::permutation(9);
  const std::vector<std::int64_t> p = perm.to_vector<std::int64_t>();
  x = nf::take(x, perm, 0);  // reads x where it writes it: computed aside first
  CHECK(values_of(x) == taken(before, {9, 5}, 0, p));
}

TEST_CASE("take: indices out of range, of the wrong dtype, or of an empty axis are errors",
          "[take]") {
  nf::Array a = nf::randn({3, 4});
  const std::vector<double> before = values_of(a);
  std::string m = message_of<nf::ValueError>([&] { a = nf::take(a, indices({0, 4}), 1); });
  CHECK(m.find("index 4 is out of bounds for axis 1 with size 4") != std::string::npos);
  CHECK(m.find("(3, 4)") != std::string::npos);
  m = message_of<nf::ValueError>([&] { a = nf::take(a, indices({-4, 1}), 0); });
  CHECK(m.find("index -4 is out of bounds for axis 0 with size 3") != std::string::npos);
  m = message_of<nf::DTypeError>([&] { a = nf::take(a, nf::array(std::vector<float>{1.f}), 0); });
  CHECK(m.find("f32") != std::string::npos);
  m = message_of<nf::DTypeError>([&] { a = nf::take(a, nf::array(std::vector<bool>{true}), 0); });
  CHECK(m.find("compress") != std::string::npos);
  m = message_of<nf::ShapeError>([&] { a = nf::take(a, indices({0}), 2); });
  CHECK(m.find("axis") != std::string::npos);
  m = message_of<nf::ShapeError>([&] { nf::take(nf::reshape(a(0, 0), {}), indices({0}), 0); });
  CHECK(m.find("0-d") != std::string::npos);
  m = message_of<nf::ValueError>([&] {
    nf::take(nf::zeros({2, 0}), indices({0}), 1, nf::TakeMode::wrap);
  });
  CHECK(m.find("length 0") != std::string::npos);
  CHECK(values_of(a) == before);
}

TEST_CASE("extract and compress: selection by a boolean mask", "[take]") {
  const nf::Array a = nf::randn({3, 4});
  const std::vector<double> va = values_of(a);
  // a[a > 0], as numpy's boolean indexing.
  const nf::Array pos = nf::extract(a > 0.0f, a);
  std::vector<double> want;
  for (double v : va)
    if (v > 0) want.push_back(v);
  CHECK(values_of(pos) == want);
  // The rows where a mask is true; a mask shorter than the axis selects among the first.
  const nf::Array rows = nf::compress(nf::array(std::vector<bool>{true, false, true}), a, 0);
  CHECK(values_of(rows) == taken(va, {3, 4}, 0, {0, 2}));
  const nf::Array cols = nf::compress(nf::array(std::vector<bool>{false, true}), a, -1);
  CHECK(values_of(cols) == taken(va, {3, 4}, 1, {1}));

  std::string m = message_of<nf::ShapeError>([&] { nf::extract(nf::ones({5}), a); });
  CHECK(m.find("(5,)") != std::string::npos);
  m = message_of<nf::ValueError>([&] {
    nf::compress(nf::array(std::vector<bool>{false, false, false, true}), a, 0);
  });
  CHECK(m.find("true at 3") != std::string::npos);
  m = message_of<nf::ShapeError>([&] { nf::compress(a > 0.0f, a, 0); });
  CHECK(m.find("1-D") != std::string::npos);
}

TEST_CASE("emulated: the generated gather kernel, every mode, a strided operand",
          "[take][emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Array a = nf::randn({6, 5, 7}, nf::f64);
  const nf::Array idx = nf::reshape(indices({4, -2, 0, 9, -9, 3}, nf::i32), {2, 3});
  for (nf::TakeMode mode : {nf::TakeMode::wrap, nf::TakeMode::clip}) {
    for (const nf::Expr& e :
         {nf::take(a, idx, 1, mode), nf::take(nf::transpose(a, {2, 0, 1}), idx, 2, mode)}) {
      INFO(nf::kernel_source(e).substr(0, 600));
      CHECK(nf::kernel_source(e).find("numpy's take") != std::string::npos);
      const std::vector<double> got = values_of(nf::test::emulate({e})[0]);
      CHECK(got == values_of(e));
    }
  }
  const nf::Expr h = nf::take(nf::astype(a, nf::f16), indices({5, 0, -1}), 0);
  CHECK(values_of(nf::test::emulate({h})[0]) == values_of(h));
}

TEST_CASE("emulated: rows gathered a vector at a time where they lie contiguous and aligned",
          "[take][emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Array idx = indices({3, -1, 0, 3, 2});
  for (nf::DType t : {nf::u8, nf::f16, nf::f32, nf::f64}) {
    const nf::Array a = nf::astype(nf::round(nf::randn({4, 6, 16}, nf::f64) * 9.0), t);
    // Rows of 16 along the last dim: a thread moves 16 bytes of any dtype.
    const int width = int(16 / nf::itemsize(t));
    for (int axis : {0, 1}) {
      const nf::Expr e = nf::take(a, idx, axis, nf::TakeMode::wrap);
      INFO(nf::name(t) << " axis " << axis << "\n" << nf::kernel_source(e).substr(0, 900));
      CHECK(nf::kernel_source(e).find("vector of " + std::to_string(width) + " elements") !=
            std::string::npos);
      CHECK(values_of(nf::test::emulate({e})[0]) == values_of(e));
    }
    // A view one element in: its rows start off a vector's boundary, so it
    // is read in narrower vectors or an element at a time.
    const nf::Array shifted = a(nf::all, nf::all, nf::slice(1, 9));
    const nf::Expr e = nf::take(shifted, idx, 1, nf::TakeMode::clip);
    INFO(nf::name(t) << " shifted\n" << nf::kernel_source(e).substr(0, 900));
    CHECK(nf::kernel_source(e).find("vector of " + std::to_string(width) + " ") ==
          std::string::npos);
    CHECK(values_of(nf::test::emulate({e})[0]) == values_of(e));
  }
}

TEST_CASE("emulated: rows copied by groups of threads, in runs, odd widths and strided rows",
          "[take][emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Array idx = indices({2, -1, 0, 2, 1, 4});
  for (nf::DType t : {nf::u8, nf::f16, nf::f32, nf::f64}) {
    // 333: runs of 128, the third holding 77; 3: shorter than a warp, a
    // thread an element.
    for (std::int64_t width : {333, 3}) {
      const nf::Array a = nf::astype(nf::round(nf::randn({5, width}, nf::f64) * 9.0), t);
      const nf::Expr e = nf::take(a, idx, 0, nf::TakeMode::wrap);
      INFO(nf::name(t) << " width " << width << "\n" << nf::kernel_source(e).substr(0, 900));
      CHECK(nf::kernel_source(e).find(width == 3 ? "A thread per element"
                                                 : "group of 32 threads") != std::string::npos);
      CHECK(values_of(nf::test::emulate({e})[0]) == values_of(e));
    }
    // Every other element of rows of 300 in a 3-D array, taken along its
    // middle axis: the lanes read with a stride.
    const nf::Array b = nf::astype(nf::round(nf::randn({2, 5, 300}, nf::f64) * 9.0), t);
    const nf::Expr e =
        nf::take(b(nf::all, nf::all, nf::slice(1, 300, 2)), idx, 1, nf::TakeMode::clip);
    INFO(nf::name(t) << " strided\n" << nf::kernel_source(e).substr(0, 900));
    CHECK(values_of(nf::test::emulate({e})[0]) == values_of(e));
  }
}

TEST_CASE("emulated: columns staged a slice a block through shared memory",
          "[take][emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Indices of rank 2 into slices of 260: 300 elements of out a slice.
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < 300; ++i) v.push_back((i * 37) % 260 - (i % 3 == 0 ? 260 : 0));
  const nf::Array idx = nf::reshape(indices(v), {2, 150});
  for (nf::DType t : {nf::u8, nf::f16, nf::f32, nf::f64}) {
    const auto values = [t](const nf::Shape& s) {
      return nf::astype(nf::round(nf::randn(s, nf::f64) * 9.0), t);
    };
    const nf::Array a = values({3, 5, 260}), b = values({3, 5, 261});
    const nf::Array at = nf::transpose(values({260, 4}));
    for (const nf::Expr& e : {nf::take(a, idx, 2, nf::TakeMode::wrap),
                              // one element in: slices off a vector's boundary
                              nf::take(b(nf::all, nf::all, nf::slice(1, 261)), idx, 2),
                              // slices strided in memory (a transposed view)
                              nf::take(at, idx, 1, nf::TakeMode::clip)}) {
      INFO(nf::name(t) << "\n" << nf::kernel_source(e).substr(0, 900));
      CHECK(nf::kernel_source(e).find("A block per slice") != std::string::npos);
      CHECK(values_of(nf::test::emulate({e})[0]) == values_of(e));
    }
  }
  // Few elements gathered from long slices: random reads cost less than
  // reading each slice whole, so a thread an element.
  const nf::Array wide = nf::randn({4, 4096});
  const nf::Expr few = nf::take(wide, indices({7, 4000, 12}), 1);
  CHECK(nf::kernel_source(few).find("A thread per element") != std::string::npos);
  CHECK(values_of(nf::test::emulate({few})[0]) == values_of(few));
}
