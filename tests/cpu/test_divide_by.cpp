// nf_divide_by (jit/runtime/nf_reduce.h), which reduction kernels use for
// x / (a value per row), checked on its host path, which runs the same
// operations as the device's: the correctly rounded quotient wherever the
// quotient is a normal number and the scaled dividend not tiny, within an
// ulp elsewhere, and IEEE's answer for zeros, infinities and NaNs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "runtime/nf_ops.h"
#include "runtime/nf_reduce.h"

namespace {

template <class T>
T divide_by(T a, T b) {
  return nf_divide_by(a, nf_divisor_of(b));
}

// Distance in representable values; 0 for equal bits.
std::int64_t ulps(float x, float y) {
  std::int32_t a, b;
  std::memcpy(&a, &x, 4);
  std::memcpy(&b, &y, 4);
  const auto order = [](std::int32_t v) -> std::int64_t { return v < 0 ? -(v & 0x7fffffff) : v; };
  return std::llabs(order(a) - order(b));
}

// A float spread over the whole range: random sign, exponent and mantissa.
float any_float(std::mt19937& gen) {
  const std::uint32_t bits = gen();
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

TEST_CASE("nf_divide_by is the quotient a / b", "[host][runtime]") {
  std::mt19937 gen(11);
  std::int64_t normal = 0;
  for (int i = 0; i < 2000000; ++i) {
    const float a = any_float(gen), b = any_float(gen);
    const float want = a / b, got = divide_by(a, b);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      continue;
    }
    INFO(a << " / " << b << " = " << want << ", got " << got);
    const float scaled = a * nf_divisor_of(b).scale;
    if (std::isnormal(want) && std::fabs(want) < std::numeric_limits<float>::max() / 2 &&
        std::fabs(scaled) >= 0x1p-100f) {
      ++normal;
      REQUIRE(ulps(got, want) == 0);
    } else {
      REQUIRE(ulps(got, want) <= 1);
    }
  }
  CHECK(normal > 1000000);  // most quotients of random floats are normal
  // Softmax's: values in [0, 1] over sums of at least 1.
  std::uniform_real_distribution<float> unit(0, 1), sum(1, 1e6f);
  for (int i = 0; i < 200000; ++i) {
    const float a = unit(gen), b = sum(gen);
    REQUIRE(ulps(divide_by(a, b), a / b) == 0);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  for (const float a : {0.0f, -0.0f, 1.5f, -3.0f, inf, -inf, tiny, -tiny, 1e38f}) {
    for (const float b : {0.0f, -0.0f, 2.0f, -0.75f, inf, -inf, tiny, 1e-40f, 3e38f}) {
      const float want = a / b, got = divide_by(a, b);
      INFO(a << " / " << b);
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
      } else {
        CHECK(ulps(got, want) <= (std::isnormal(want) || want == 0 || std::isinf(want) ? 0 : 1));
        CHECK(std::signbit(got) == std::signbit(want));
      }
    }
  }
  CHECK(std::isnan(divide_by(std::nanf(""), 2.0f)));
  CHECK(std::isnan(divide_by(2.0f, std::nanf(""))));
  CHECK(divide_by(1.0, 3.0) == 1.0 / 3.0);
  CHECK(divide_by(-0.0, 5.0) == 0.0);
  CHECK(std::signbit(divide_by(-0.0, 5.0)));
}
