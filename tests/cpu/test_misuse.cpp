// Misuse gets a typed error naming what was wrong, and nothing is lost
// (issue 20, items 1-3): sizes checked where shapes are made, scalars
// converted as numpy 2 converts them, one conversion rule for astype on both
// backends, and read-only broadcast views. Every error test checks that the
// array the statement targeted is unchanged.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using nf::Array;
using nf::DType;
using V = std::vector<double>;

namespace {

using nf::test::message_of;

// Fresh inputs each run; the seed is printed with any failure.
std::uint32_t fresh_seed() {
  return std::random_device{}();
}

// A random f64 target of `n` values and a check that it kept them.
struct Target {
  Array array;
  V before;

  explicit Target(std::mt19937& rng, std::int64_t n = 6) {
    std::uniform_real_distribution<double> u(-10, 10);
    for (std::int64_t i = 0; i < n; ++i) before.push_back(u(rng));
    array = nf::array(before);
  }
  void check_unchanged(const Array& seen_as) const {
    CHECK(seen_as.storage() == array.storage());
    CHECK(seen_as.shape() == nf::Shape{std::int64_t(before.size())});
    CHECK_THAT(seen_as.to_vector<double>(), Equals(before));
  }
};

constexpr std::int64_t k62 = std::int64_t(1) << 62;
constexpr std::int64_t k32 = std::int64_t(1) << 32;

// ---- reading arrays of any dtype as doubles, exactly -------------------------

// The elements of `a` as doubles, through the C++ type of its dtype (f16 and
// bf16 widen to f32 exactly), so reading converts nothing by numfuse's rules.
V exact_values(const Array& a) {
  const auto as_double = [](const auto& v) { return V(v.begin(), v.end()); };
  switch (a.dtype()) {
    case DType::b8:
      return as_double(a.to_vector<bool>());
    case DType::u8:
      return as_double(a.to_vector<std::uint8_t>());
    case DType::i32:
      return as_double(a.to_vector<std::int32_t>());
    case DType::i64: {
      // Past 2^53 a double would round: i64 results are checked as integers.
      return as_double(a.to_vector<std::int64_t>());
    }
    case DType::f64:
      return a.to_vector<double>();
    default:
      return as_double(a.to_vector<float>());
  }
}

// ---- the conversion table of README's "Errors" section, written again --------

struct IntRange {
  double lo, hi;
};
IntRange range_of(DType t) {
  switch (t) {
    case DType::u8:
      return {0, 255};
    case DType::i32:
      return {-2147483648.0, 2147483647.0};
    default:
      return {-9223372036854775808.0, 9223372036854775807.0};
  }
}

// float -> integer: truncation in range, saturation outside it, NaN -> 0.
std::int64_t float_to_int(double v, DType to) {
  if (std::isnan(v)) return 0;
  const IntRange r = range_of(to);
  if (v <= r.lo)
    return to == nf::i64 ? std::numeric_limits<std::int64_t>::min() : std::int64_t(r.lo);
  if (v >= r.hi)
    return to == nf::i64 ? std::numeric_limits<std::int64_t>::max() : std::int64_t(r.hi);
  return std::int64_t(std::trunc(v));
}

// integer -> integer: modulo 2^bits (C++20 defines the narrowing casts so).
std::int64_t wrap(std::int64_t v, DType to) {
  switch (to) {
    case DType::u8:
      return static_cast<std::uint8_t>(v);
    case DType::i32:
      return static_cast<std::int32_t>(v);
    default:
      return v;
  }
}

// Source values: edges and random values of each dtype, all exact in it.
struct Source {
  Array array;
  std::vector<std::int64_t> ints;  // integer and bool sources
  V floats;                        // floating sources
};

Source make_source(DType t, std::mt19937& rng) {
  Source s;
  if (t == nf::bool_) {
    std::vector<bool> b{false, true, true, false};
    for (bool x : b) s.ints.push_back(x);
    s.array = nf::array(b);
  } else if (t == nf::u8) {
    std::vector<std::uint8_t> v{0, 1, 127, 128, 254, 255};
    for (int i = 0; i < 16; ++i) v.push_back(std::uint8_t(rng()));
    s.ints.assign(v.begin(), v.end());
    s.array = nf::array(v);
  } else if (t == nf::i32) {
    std::vector<std::int32_t> v{0, 1, -1, 255, 256, -129, 2147483647, -2147483647 - 1};
    for (int i = 0; i < 16; ++i) v.push_back(std::int32_t(rng()));
    s.ints.assign(v.begin(), v.end());
    s.array = nf::array(v);
  } else if (t == nf::i64) {
    std::vector<std::int64_t> v{0,
                                -1,
                                300,
                                1LL << 31,
                                -(1LL << 31) - 1,
                                1LL << 40,
                                std::numeric_limits<std::int64_t>::max(),
                                std::numeric_limits<std::int64_t>::min()};
    std::mt19937_64 wide(rng());
    for (int i = 0; i < 16; ++i) v.push_back(std::int64_t(wide()));
    s.ints = v;
    s.array = nf::array(v);
  } else {
    // Significands short enough for the dtype, exponents reaching past every
    // integer range the dtype can hold, the special values, and the edges.
    const int bits = t == nf::bf16 ? 8 : t == nf::f16 ? 11 : 24;
    const int max_exp = t == nf::f16 ? 15 - bits : t == nf::f32 || t == nf::bf16 ? 100 : 900;
    V v{0.0,   -0.0,   0.5,    -0.5,    -1.0,   255.0,   256.0,    -128.0,    3.75, -3.75,
        127.5, 1024.0, 2048.0, -2048.0, 4096.0, -4096.0, INFINITY, -INFINITY, NAN};
    if (t != nf::f16) {
      for (int e : {31, 63, 64, 80}) {
        v.push_back(std::ldexp(1.0, e));
        v.push_back(-std::ldexp(1.0, e));
      }
    }
    std::uniform_int_distribution<int> sig(0, (1 << (bits - 1)) - 1), ex(-6, max_exp);
    for (int i = 0; i < 32; ++i) {
      const double x = std::ldexp(double(sig(rng)), ex(rng));
      v.push_back(rng() % 2 ? x : -x);
    }
    s.floats = v;
    // Exact in f32, so the cast to a narrower dtype rounds nothing.
    std::vector<float> f(v.begin(), v.end());
    s.array = t == nf::f64 ? nf::array(v) : nf::array(f).astype(t);
  }
  return s;
}

double expected_float(double x, DType to) {
  switch (to) {
    case DType::f32:
      return double(float(x));
    default:
      return x;  // f64 holds it; f16 and bf16 are checked with a tolerance
  }
}

void check_float_result(double want, double got, DType to) {
  if (std::isnan(want)) {
    CHECK(std::isnan(got));
  } else if (to == nf::f16 || to == nf::bf16) {
    // The magnitudes that round to infinity: half an ulp past the largest finite.
    const double overflow = to == nf::f16 ? 65520.0 : std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
    const double rel = to == nf::f16 ? 1.0 / 1024 : 1.0 / 128;
    if (std::abs(want) >= overflow) {
      CHECK(got == std::copysign(INFINITY, want));
    } else {
      CHECK(got == Approx(want).epsilon(rel).margin(to == nf::f16 ? 6e-8 : 1e-38));
    }
  } else {
    CHECK(got == want);
  }
}

}  // namespace

// ---- item 1: sizes ----------------------------------------------------------

TEST_CASE("zeros({1 << 62}) raises OutOfMemory naming the bytes asked, for every dtype",
          "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng);
  Array alias = t.array;
  // 2^62 elements times 1, 2, 4 and 8 bytes: the wider ones do not fit 64 bits.
  const std::map<std::size_t, std::string> bytes{{1, "4611686018427387904"},
                                                 {2, "9223372036854775808"},
                                                 {4, "18446744073709551616"},
                                                 {8, "36893488147419103232"}};
  for (DType d : nf::all_dtypes) {
    INFO(nf::name(d));
    const std::string m = message_of<nf::OutOfMemory>([&] { t.array = nf::zeros({k62}, d); });
    CHECK_THAT(m, Contains(bytes.at(nf::itemsize(d)) + " bytes"));
    CHECK_THROWS_AS(t.array = nf::ones({k62}, d), nf::OutOfMemory);
    CHECK_THROWS_AS(t.array = nf::full({2, k62 / 2}, 1.0, d), nf::OutOfMemory);
    CHECK_THROWS_AS(t.array = nf::empty({k62}, d), nf::OutOfMemory);
    t.check_unchanged(alias);
  }
  // On a GPU the message also says what the device has free.
  if (nf::default_device().kind == nf::Device::Kind::cuda) {
    CHECK_THAT(message_of<nf::OutOfMemory>([&] { t.array = nf::zeros({k62}, nf::u8); }),
               Contains("free"));
  }
  t.check_unchanged(alias);
}

TEST_CASE("statements whose size passes 64 bits raise OutOfMemory when built", "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng);
  Array alias = t.array;
  Array one = nf::ones({1}, nf::u8);
  // u8 elements fit: the f64 result of the same shape does not.
  CHECK_THAT(
      message_of<nf::OutOfMemory>(
          [&] { t.array = nf::astype(nf::broadcast_to(one, {k62}), nf::f64); }),
      Contains("36893488147419103232") && Contains("(4611686018427387904,)") && Contains("f64"));
  CHECK_THROWS_AS(t.array = nf::rand({k62}), nf::OutOfMemory);
  CHECK_THROWS_AS(t.array = nf::arange(0.0, double(k62), 1.0, nf::f64), nf::OutOfMemory);
  t.check_unchanged(alias);
}

TEST_CASE("a shape of more than 2^63 elements raises ShapeError naming it", "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng);
  Array alias = t.array;
  const std::string shape = "(4294967296, 4294967296)";
  for (DType d : nf::all_dtypes) {
    INFO(nf::name(d));
    CHECK_THAT(message_of<nf::ShapeError>([&] {
                 t.array = nf::zeros({k32, k32}, d);
               }),
               Contains(shape) && Contains("zeros"));
    CHECK_THROWS_AS(t.array = nf::empty({k32, k32}, d), nf::ShapeError);
    CHECK_THROWS_AS(t.array = nf::full({k32, 2, k32}, 1.0, d), nf::ShapeError);
    // A zero dimension empties the array, but its strides still multiply the rest.
    CHECK_THROWS_AS(t.array = nf::zeros({0, k32, k32}, d), nf::ShapeError);
  }
  Array one = nf::ones({1, 1});
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               (void)one.broadcast_to({k32, k32});
             }),
             Contains(shape) && Contains("broadcast_to"));
  CHECK_THROWS_AS(nf::broadcast_to(one, {k32, k32}), nf::ShapeError);
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               t.array = one.broadcast_to({k32, 1}) + one.broadcast_to({1, k32});
             }),
             Contains(shape) && Contains("add"));
  CHECK_THROWS_AS(nf::reshape(one, {k32, k32}), nf::ShapeError);
  CHECK_THROWS_AS(nf::reshape(one, {k32, k32, -1}), nf::ShapeError);
  CHECK_THROWS_AS(t.array.reshape({k32, k32, 0}), nf::ShapeError);
  CHECK_THROWS_AS(t.array = nf::rand({k32, k32}), nf::ShapeError);
  CHECK_THROWS_AS(t.array = nf::eye(k32 * 2), nf::ShapeError);
  CHECK_THROWS_AS(t.array = nf::arange(0.0, 1e30, 1.0, nf::f64), nf::ShapeError);
  // Batch axes of a product that broadcast past 2^63.
  Array a = nf::ones({1, 1, 2, 2}).broadcast_to({k32, 1, 2, 2});
  Array b = nf::ones({1, 1, 2, 2}).broadcast_to({1, k32, 2, 2});
  CHECK_THROWS_AS(t.array = nf::matmul(a, b), nf::ShapeError);
  t.check_unchanged(alias);
}

TEST_CASE("negative dimensions raise ShapeError naming the shape, everywhere", "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng);
  Array alias = t.array;
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               t.array = nf::zeros({2, -3});
             }),
             Contains("(2, -3)") && Contains("zeros"));
  CHECK_THROWS_AS(t.array = nf::empty({-1}), nf::ShapeError);
  CHECK_THROWS_AS(t.array = nf::full({-1}, 2.0), nf::ShapeError);
  CHECK_THROWS_AS(t.array = nf::array(std::vector<double>{}, {-1, 0}), nf::ShapeError);
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               t.array = nf::randn({3, -2});
             }),
             Contains("(3, -2)"));
  CHECK_THROWS_AS(t.array.broadcast_to({-1, 6}), nf::ShapeError);
  CHECK_THROWS_AS(t.array.reshape({-2, -3}), nf::ShapeError);
  t.check_unchanged(alias);
}

TEST_CASE("slices with extreme steps count their elements without overflow", "[misuse]") {
  Array a = nf::arange(10);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const std::int64_t most_negative = std::numeric_limits<std::int64_t>::min();
  CHECK_THAT(a(nf::slice(3, nf::none, big)).to_vector<double>(), Equals(V{3}));
  CHECK_THAT(a(nf::slice(nf::none, nf::none, most_negative)).to_vector<double>(), Equals(V{9}));
  CHECK_THAT(a(nf::slice(8, 1, -3)).to_vector<double>(), Equals(V{8, 5, 2}));
  CHECK_THAT(a(nf::slice(1, 8, 3)).to_vector<double>(), Equals(V{1, 4, 7}));
}

// ---- item 2: values ---------------------------------------------------------

TEST_CASE("full() raises ValueError for values an integer dtype cannot hold, as numpy 2",
          "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng);
  Array alias = t.array;
  CHECK_THAT(message_of<nf::ValueError>([&] { t.array = nf::full({3}, 300, nf::u8); }),
             Contains("300") && Contains("u8") && Contains("out of bounds"));
  for (double bad : {double(NAN), double(INFINITY), -double(INFINITY)}) {
    for (DType d : {nf::u8, nf::i32, nf::i64}) {
      INFO(nf::name(d) << " " << bad);
      CHECK_THAT(message_of<nf::ValueError>([&] { t.array = nf::full({3}, bad, d); }),
                 Contains(std::string(nf::name(d))) && Contains(std::isnan(bad) ? "nan" : "inf"));
    }
  }
  for (DType d : {nf::u8, nf::i32, nf::i64}) {
    INFO(nf::name(d));
    const IntRange r = range_of(d);
    // The edges fit; one past them does not (2^63 is i64's first double past).
    CHECK_THROWS_AS(t.array = nf::full({2}, r.lo - (d == nf::i64 ? 4096 : 1), d), nf::ValueError);
    CHECK_THROWS_AS(t.array = nf::full({2}, d == nf::i64 ? 9223372036854775808.0 : r.hi + 1, d),
                    nf::ValueError);
    CHECK(nf::full({2}, r.lo, d).to_vector<double>() == V{r.lo, r.lo});
    if (d != nf::i64) CHECK(nf::full({2}, r.hi, d).to_vector<double>() == V{r.hi, r.hi});
    // A fraction truncates, as C++ and numpy do.
    CHECK(nf::full({1}, -2.75, d == nf::u8 ? nf::i32 : d).to_vector<double>() == V{-2});
    CHECK(nf::full({1}, 254.9, d).to_vector<double>() == V{254});
    std::uniform_int_distribution<std::int64_t> in_range(std::int64_t(r.lo) / 2,
                                                         std::int64_t(r.hi) / 2);
    const double v = double(in_range(rng));  // rounded to a double, as full() takes it
    CHECK(nf::full({1}, v, d).to_vector<std::int64_t>()[0] == std::int64_t(v));
  }
  // Floating and bool dtypes take any value (NaN is true, as bool(nan) in numpy).
  CHECK(std::isnan(nf::full({1}, NAN, nf::f16).item<float>()));
  CHECK(nf::full({1}, 1e6, nf::f16).item<float>() == INFINITY);
  CHECK(nf::full({1}, NAN, nf::bool_).item<bool>());
  CHECK(nf::full({1}, 300, nf::bool_).item<bool>());
  t.check_unchanged(alias);
}

TEST_CASE("C++ integer scalars out of an integer array's range raise (NEP 50)", "[misuse]") {
  std::mt19937 rng(fresh_seed());
  std::uniform_int_distribution<int> small(0, 100);
  for (DType d : {nf::u8, nf::i32, nf::i64}) {
    INFO(nf::name(d));
    std::vector<std::int32_t> values;
    for (int i = 0; i < 5; ++i) values.push_back(small(rng));
    Array a = nf::array(values).astype(d), alias = a;
    const V before = a.to_vector<double>();
    const IntRange r = range_of(d);
    if (d != nf::i64) {
      const auto past = std::int64_t(r.hi) + 1, below = std::int64_t(r.lo) - 1;
      CHECK_THAT(message_of<nf::ValueError>([&] { a += past; }),
                 Contains(std::to_string(past)) && Contains(std::string(nf::name(d))));
      CHECK_THROWS_AS(a = a * below, nf::ValueError);
      CHECK_THROWS_AS(a = nf::maximum(a, past), nf::ValueError);
      CHECK_THROWS_AS(a = nf::where(a > 3, a, below), nf::ValueError);
      CHECK_THROWS_AS(a(nf::slice(0, 2)) = a(nf::slice(0, 2)) - past, nf::ValueError);
    }
    // The edges are in range: they convert, and the sums wrap as numpy's do.
    const auto hi = std::int64_t(r.hi);
    Array sum = a + hi;
    CHECK(sum.dtype() == d);
    const auto got = sum.to_vector<std::int64_t>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      CHECK(got[i] == wrap(std::int64_t(std::uint64_t(values[i]) + std::uint64_t(hi)), d));
    }
    // A floating scalar promotes (numpy: int array with a Python float is f64).
    CHECK((a + 1e300).dtype() == nf::f64);
    CHECK(a.storage() == alias.storage());
    CHECK(a.to_vector<double>() == before);
  }
}

TEST_CASE("astype converts every pair of dtypes by the one documented rule", "[misuse]") {
  const std::uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  for (DType from : nf::all_dtypes) {
    const Source src = make_source(from, rng);
    for (DType to : nf::all_dtypes) {
      INFO(nf::name(from) << " -> " << nf::name(to));
      const Array out = src.array.astype(to);
      REQUIRE(out.dtype() == to);
      if (to == nf::i64 && !src.floats.empty()) {
        const auto got = out.to_vector<std::int64_t>();
        for (std::size_t i = 0; i < got.size(); ++i) {
          INFO(src.floats[i]);
          CHECK(got[i] == float_to_int(src.floats[i], to));
        }
        continue;
      }
      if (to == nf::i64) {
        CHECK(out.to_vector<std::int64_t>() == src.ints);
        continue;
      }
      const V got = exact_values(out);
      for (std::size_t i = 0; i < got.size(); ++i) {
        const bool floating_src = !src.floats.empty();
        const double x = floating_src ? src.floats[i] : double(src.ints[i]);
        INFO("element " << i << ": " << (floating_src ? x : double(src.ints[i])));
        if (to == nf::bool_) {
          CHECK(got[i] == double(floating_src ? x != 0 : src.ints[i] != 0));
        } else if (nf::is_integral(to)) {
          CHECK(got[i] == double(floating_src ? float_to_int(x, to) : wrap(src.ints[i], to)));
        } else if (floating_src) {
          check_float_result(expected_float(x, to), got[i], to);
        } else if (to == nf::f32) {
          CHECK(got[i] == double(float(src.ints[i])));  // one rounding, to nearest
        } else if (to == nf::f64) {
          CHECK(got[i] == double(src.ints[i]));
        } else {
          check_float_result(double(src.ints[i]), got[i], to);
        }
      }
    }
  }
}

TEST_CASE("integer powers with a negative scalar exponent raise, array exponents follow one rule",
          "[misuse]") {
  const std::uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> base(-3, 3), exponent(-4, 4);
  for (DType d : {nf::i32, nf::i64}) {
    INFO(nf::name(d));
    std::vector<std::int32_t> b, e;
    for (int i = 0; i < 40; ++i) {
      b.push_back(base(rng));
      e.push_back(exponent(rng));
    }
    Array x = nf::array(b).astype(d), alias = x;
    const std::string m = message_of<nf::ValueError>([&] { x = nf::power(x, -1); });
    CHECK_THAT(m, Contains("negative integer powers") && Contains(std::string(nf::name(d))) &&
                      Contains("-1"));
    CHECK_THROWS_AS(x = nf::pow(x, -3), nf::ValueError);
    CHECK_THROWS_AS(x(nf::slice(0, 4)) = nf::power(x(nf::slice(0, 4)), -2), nf::ValueError);
    CHECK(x.storage() == alias.storage());
    CHECK(x.to_vector<std::int32_t>() == b);
    // A floating scalar promotes, and a floating base takes any exponent.
    CHECK(nf::power(x, -1.0).dtype() == nf::f64);
    CHECK(nf::power(nf::astype(x, nf::f64), -1).dtype() == nf::f64);
    // With an array of exponents a negative one gives 0, unless the base is
    // 1 (1) or -1 (+-1 by parity): the same on every backend.
    const auto got = Array(nf::power(x, nf::array(e).astype(d))).to_vector<std::int64_t>();
    for (std::size_t i = 0; i < b.size(); ++i) {
      INFO(b[i] << " ** " << e[i]);
      std::int64_t want = 1;
      if (e[i] >= 0) {
        for (int k = 0; k < e[i]; ++k) want *= b[i];
      } else {
        want = b[i] == 1 ? 1 : b[i] == -1 ? (e[i] % 2 ? -1 : 1) : 0;
      }
      CHECK(got[i] == want);
    }
  }
  // u8 cannot hold -1 at all (numpy 2: out of bounds for uint8).
  CHECK_THROWS_AS(nf::power(nf::ones({2}, nf::u8), -1), nf::ValueError);
}

// ---- item 3: read-only views -----------------------------------------------

TEST_CASE("broadcast views are read-only: writing to one raises and changes nothing", "[misuse]") {
  std::mt19937 rng(fresh_seed());
  Target t(rng, 4);
  Array base = t.array;
  Array v = base.broadcast_to({3, 4});
  CHECK(base.writeable());
  CHECK_FALSE(v.writeable());
  CHECK_FALSE(v.T().writeable());
  CHECK_FALSE(v(nf::all, 0).writeable());
  // As numpy's: every view of a broadcast is read-only, also one whose
  // elements no longer repeat, and a broadcast that repeats nothing.
  CHECK_FALSE(v(1).writeable());
  CHECK_THROWS_AS(v(1) = nf::zeros({4}, nf::f64), nf::ValueError);
  CHECK_FALSE(base.broadcast_to({1, 4}).writeable());
  CHECK_FALSE(base.broadcast_to({0, 4}).writeable());
  CHECK(base.expand_dims(0).writeable());
  // An empty array repeats no element, whatever its strides: numpy's
  // zeros(0).reshape(64, 0, 8, 5) is writeable (its strides here start with a 0).
  Array empty = nf::zeros({0}).reshape({64, 0, 8, 5});
  CHECK(empty.writeable());
  CHECK_NOTHROW(empty -= nf::maximum(empty, 1.0f));
  CHECK(empty.shape() == nf::Shape{64, 0, 8, 5});

  const std::string m = message_of<nf::ValueError>([&] { v += 1; });
  CHECK_THAT(m, Contains("read-only") && Contains("(3, 4)") && Contains("(0, 1)"));
  CHECK_THROWS_AS(v -= v, nf::ValueError);
  CHECK_THROWS_AS(v(nf::all, nf::all) = nf::zeros({3, 4}, nf::f64), nf::ValueError);
  CHECK_THAT(message_of<nf::ValueError>([&] { v(nf::all, 2) = 7.0; }), Contains("(3,)"));
  CHECK_THROWS_AS(Array(v) = nf::ones({4}, nf::f64), nf::ValueError);
  t.check_unchanged(base);
  CHECK(v.storage() == base.storage());
  CHECK_THAT(v.to_vector<double>(), Equals(V{t.before[0], t.before[1], t.before[2], t.before[3],
                                             t.before[0], t.before[1], t.before[2], t.before[3],
                                             t.before[0], t.before[1], t.before[2], t.before[3]}));

  // `v = e` rebinds v, as in numpy; a copy is writeable.
  v = v * 2;
  CHECK(v.writeable());
  CHECK(v.storage() != base.storage());
  Array c = base.broadcast_to({2, 4}).copy();
  c += 1;
  CHECK(c.to_vector<double>()[4] == t.before[0] + 1);
  t.check_unchanged(base);
}
