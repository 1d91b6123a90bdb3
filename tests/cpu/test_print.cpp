// Printing arrays: numpy's repr, worked out by hand from numpy's rules
// (numpy/_core/arrayprint.py, default print options), with numfuse's dtype
// names and the device in the suffix.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

using nf::Array;

namespace {

// `text` with "DEV" replaced by the default device's name, which the suffix of
// every repr names. The cases keep their last lines short or long enough
// that "cuda:0", three characters longer than "cpu", wraps the same.
std::string on_device(std::string text) {
  const std::size_t at = text.find("DEV");
  return text.replace(at, 3, nf::to_string(nf::default_device()));
}

std::string repr(const Array& a) {
  return nf::to_string(a);
}

// 0, 0.1, 0.2, ... as f32: `count` floats, each the nearest to its tenth.
Array tenths(int count) {
  std::vector<float> values;
  for (int i = 0; i < count; ++i) values.push_back(static_cast<float>(i) / 10);
  return nf::array(values);
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("floats print in fixed notation with their own digits, aligned", "[print]") {
  CHECK(repr(nf::array(std::vector<float>{1, 2.5, 3, 4}, nf::Shape{2, 2})) ==
        on_device("array([[1. , 2.5],\n"
                  "       [3. , 4. ]], dtype=f32, device=DEV)"));
  CHECK(repr(nf::array(std::vector<float>{0.1f, 0.25f, -3.125f, 10})) ==
        on_device("array([ 0.1  ,  0.25 , -3.125, 10.   ], dtype=f32, device=DEV)"));
  CHECK(repr(nf::array(std::vector<float>{-1.5, 2})) ==
        on_device("array([-1.5,  2. ], dtype=f32, device=DEV)"));
  // At most 8 fractional digits: f64 thirds are rounded there, while an f32
  // third reads back with 8.
  CHECK(repr(nf::array(std::vector<double>{1.0 / 3, 2.0 / 3, 1})) ==
        on_device("array([0.33333333, 0.66666667, 1.        ], dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<float>{1.0f / 3, 0.5f})) ==
        on_device("array([0.33333334, 0.5       ], dtype=f32, device=DEV)"));
  // 2^-9 = 0.001953125 rounds half to even at the 8th digit, as Dragon4 does.
  CHECK(repr(nf::array(std::vector<double>{0.001953125, 1})) ==
        on_device("array([0.00195312, 1.        ], dtype=f64, device=DEV)"));
  // 1e-4 is the smallest value that keeps fixed notation.
  CHECK(repr(nf::array(std::vector<double>{1e-4, 0.05})) ==
        on_device("array([0.0001, 0.05  ], dtype=f64, device=DEV)"));
}

TEST_CASE("floats switch to scientific notation for tiny, huge or wide-ranging values", "[print]") {
  CHECK(repr(nf::array(std::vector<float>{1e-5f, 1})) ==
        on_device("array([1.e-05, 1.e+00], dtype=f32, device=DEV)"));
  // Mantissas are padded with zeros to a common number of digits.
  CHECK(repr(nf::array(std::vector<double>{1.5e-5, 1})) ==
        on_device("array([1.5e-05, 1.0e+00], dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<double>{1, 1001})) ==
        on_device("array([1.000e+00, 1.001e+03], dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<double>{1e8})) ==
        on_device("array([1.e+08], dtype=f64, device=DEV)"));
  // Exponents share a number of digits; signs take a column.
  CHECK(repr(nf::array(std::vector<double>{1e-100, -2.5})) ==
        on_device("array([ 1.0e-100, -2.5e+000], dtype=f64, device=DEV)"));
}

TEST_CASE("nan and inf are right-aligned in the column of the finite values", "[print]") {
  CHECK(repr(nf::array(std::vector<double>{kNan, 1.5, -kInf})) ==
        on_device("array([ nan,  1.5, -inf], dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<double>{kNan, 1e-5})) ==
        on_device("array([   nan, 1.e-05], dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<double>{kNan, kInf}).astype(nf::f32)) ==
        on_device("array([nan, inf], dtype=f32, device=DEV)"));
}

TEST_CASE("integers and bools are right-aligned", "[print]") {
  CHECK(repr(nf::array(std::vector<std::int32_t>{1, -20, 300})) ==
        on_device("array([  1, -20, 300], dtype=i32, device=DEV)"));
  CHECK(repr(nf::array(std::vector<std::int64_t>{-5, 12345678901})) ==
        on_device("array([         -5, 12345678901], dtype=i64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<std::uint8_t>{0, 7, 255})) ==
        on_device("array([  0,   7, 255], dtype=u8, device=DEV)"));
  CHECK(repr(nf::array(std::vector<bool>{true, false})) ==
        on_device("array([ True, False], dtype=bool, device=DEV)"));
  CHECK(repr(nf::array(std::vector<bool>{true, true})) ==
        on_device("array([ True,  True], dtype=bool, device=DEV)"));
}

TEST_CASE("0-d and empty arrays", "[print]") {
  CHECK(repr(nf::array(std::vector<double>{3.5}, nf::Shape{})) ==
        on_device("array(3.5, dtype=f64, device=DEV)"));
  CHECK(repr(nf::array(std::vector<float>{1}, nf::Shape{})) ==
        on_device("array(1., dtype=f32, device=DEV)"));
  CHECK(repr(nf::array(std::vector<std::int32_t>{7}, nf::Shape{})) ==
        on_device("array(7, dtype=i32, device=DEV)"));
  CHECK(repr(nf::array(std::vector<bool>{true}, nf::Shape{})) ==
        on_device("array(True, dtype=bool, device=DEV)"));
  CHECK(repr(nf::zeros({0, 3})) == on_device("array([], shape=(0, 3), dtype=f32, device=DEV)"));
  CHECK(repr(nf::zeros({0}, nf::i64)) == on_device("array([], dtype=i64, device=DEV)"));
}

TEST_CASE("blocks of a 3-d array are separated by a blank line", "[print]") {
  CHECK(repr(nf::arange(12).reshape({2, 3, 2})) ==
        on_device("array([[[ 0,  1],\n"
                  "        [ 2,  3],\n"
                  "        [ 4,  5]],\n"
                  "\n"
                  "       [[ 6,  7],\n"
                  "        [ 8,  9],\n"
                  "        [10, 11]]], dtype=i64, device=DEV)"));
}

TEST_CASE("long rows wrap at 75 columns under their first element", "[print]") {
  CHECK(repr(tenths(30)) ==
        on_device("array([0. , 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1. , 1.1, 1.2,\n"
                  "       1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2. , 2.1, 2.2, 2.3, 2.4, 2.5,\n"
                  "       2.6, 2.7, 2.8, 2.9], dtype=f32, device=DEV)"));
  // Each nesting level takes a column from the rows.
  CHECK(repr(nf::arange(40).reshape({2, 20})) ==
        on_device("array([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,\n"
                  "        16, 17, 18, 19],\n"
                  "       [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
                  "        36, 37, 38, 39]], dtype=i64, device=DEV)"));
}

TEST_CASE("a suffix that would pass 75 columns goes on a line of its own", "[print]") {
  CHECK(repr(tenths(26)) ==
        on_device("array([0. , 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1. , 1.1, 1.2,\n"
                  "       1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2. , 2.1, 2.2, 2.3, 2.4, 2.5],\n"
                  "      dtype=f32, device=DEV)"));
}

TEST_CASE("arrays of more than 1000 elements show 3 entries at each end of long axes", "[print]") {
  CHECK(repr(nf::arange(2000)) ==
        on_device("array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=i64, device=DEV)"));
  CHECK(repr(nf::arange(-1000, 1000).reshape({2, 1000})) ==
        on_device("array([[-1000,  -999,  -998, ...,    -3,    -2,    -1],\n"
                  "       [    0,     1,     2, ...,   997,   998,   999]],\n"
                  "      dtype=i64, device=DEV)"));
  CHECK(repr(nf::arange(2000).reshape({1000, 2})) ==
        on_device("array([[   0,    1],\n"
                  "       [   2,    3],\n"
                  "       [   4,    5],\n"
                  "       ...,\n"
                  "       [1994, 1995],\n"
                  "       [1996, 1997],\n"
                  "       [1998, 1999]], dtype=i64, device=DEV)"));
}

TEST_CASE("a summary's widths and notation come from the elements it shows", "[print]") {
  std::vector<std::int64_t> ints(2000, 0);
  ints[1000] = 123456;
  CHECK(repr(nf::array(ints)) ==
        on_device("array([0, 0, 0, ..., 0, 0, 0], dtype=i64, device=DEV)"));
  std::vector<double> floats(2000, 0);
  floats[1000] = 1e-10;
  CHECK(repr(nf::array(floats)) ==
        on_device("array([0., 0., 0., ..., 0., 0., 0.], dtype=f64, device=DEV)"));
}

TEST_CASE("views print in their logical order", "[print]") {
  CHECK(repr(nf::arange(6).reshape({2, 3}).T()) ==
        on_device("array([[0, 3],\n"
                  "       [1, 4],\n"
                  "       [2, 5]], dtype=i64, device=DEV)"));
  CHECK(repr(nf::arange(10)(nf::slice(nf::none, nf::none, -3))) ==
        on_device("array([9, 6, 3, 0], dtype=i64, device=DEV)"));
  CHECK(repr(nf::arange(2000).reshape({2, 1000}).T()) ==
        on_device("array([[   0, 1000],\n"
                  "       [   1, 1001],\n"
                  "       [   2, 1002],\n"
                  "       ...,\n"
                  "       [ 997, 1997],\n"
                  "       [ 998, 1998],\n"
                  "       [ 999, 1999]], dtype=i64, device=DEV)"));
}

TEST_CASE("f16 and bf16 print the fewest digits that read back in their own precision", "[print]") {
  const auto narrow = [](std::vector<float> values, nf::DType t) {
    return nf::array(values).astype(t);
  };
  CHECK(repr(narrow({0.1f, 0.2f, 1.5f}, nf::f16)) ==
        on_device("array([0.1, 0.2, 1.5], dtype=f16, device=DEV)"));
  // f16's 1/3 is 0.333251953125, bf16's 0.333984375.
  CHECK(repr(narrow({1.0f / 3}, nf::f16)) == on_device("array([0.3333], dtype=f16, device=DEV)"));
  CHECK(repr(narrow({0.1f, 3, -2.5f}, nf::bf16)) ==
        on_device("array([ 0.1,  3. , -2.5], dtype=bf16, device=DEV)"));
  CHECK(repr(narrow({1.0f / 3}, nf::bf16)) == on_device("array([0.334], dtype=bf16, device=DEV)"));
}

TEST_CASE("arrays and expressions write to streams", "[print]") {
  const Array a = nf::array(std::vector<float>{1, 2.5});
  std::ostringstream array_stream;
  array_stream << a;
  CHECK(array_stream.str() == on_device("array([1. , 2.5], dtype=f32, device=DEV)"));
  std::ostringstream expr_stream;
  expr_stream << (a + a) << '\n' << a * 2;
  CHECK(expr_stream.str() == on_device("array([2., 5.], dtype=f32, device=DEV)\n") +
                                 on_device("array([2., 5.], dtype=f32, device=DEV)"));
}
