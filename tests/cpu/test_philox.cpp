// The shared Philox runtime header: known answers, cuRAND's value transforms,
// the accuracy of the portable log and sincospi behind the normals, and the
// (seed, stream, i) layout that both backends must follow.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/nf_philox.h"

namespace {

struct Kat {
  nf_u32x4 ctr;
  unsigned int key0, key1;
  nf_u32x4 expected;
};

// Random123's tests/kat_vectors, the three "philox4x32 10" lines
// (counter x y z w, key 0 1, expected output x y z w).
const Kat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     0x00000000,
     0x00000000,
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     0xffffffff,
     0xffffffff,
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     0xa4093822,
     0x299f31d0,
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::uint64_t bits_of(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// cuRAND's expressions for the uniform float, written unfused: the volatile
// product keeps the compiler from contracting it into an fma.
float curand_uniform_unfused(unsigned int x) {
  volatile float product = (float)x * 2.3283064e-10f;  // CURAND_2POW32_INV
  return product + 2.3283064e-10f / 2;
}

nf_u32x4 block_words(std::uint64_t seed, std::uint64_t stream, std::uint64_t b) {
  nf_u32x4 ctr = {static_cast<unsigned int>(b), static_cast<unsigned int>(b >> 32),
                  static_cast<unsigned int>(stream), static_cast<unsigned int>(stream >> 32)};
  return nf_philox4x32_10(ctr, static_cast<unsigned int>(seed),
                          static_cast<unsigned int>(seed >> 32));
}

// Element indices that cover every lane and both 32-bit halves of the block
// number: 0..15, and blocks 2^32 and 2^32 + 1 for each layout.
std::vector<std::uint64_t> layout_indices() {
  std::vector<std::uint64_t> is;
  for (std::uint64_t i = 0; i < 16; ++i) is.push_back(i);
  for (std::uint64_t i = 0; i < 8; ++i) {
    is.push_back((std::uint64_t{1} << 34) + i);  // f32: block 2^32 + i / 4
    is.push_back((std::uint64_t{1} << 33) + i);  // f64: block 2^32 + i / 2
  }
  is.push_back(~std::uint64_t{0});
  return is;
}

// |got - ref| in units of the last place of ref at the precision of Float.
template <class Float>
double ulp_error(Float got, long double ref) {
  if (ref == 0) return got == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  int exponent;
  std::frexp(ref, &exponent);  // ref = m 2^exponent, m in [0.5, 1)
  const long double ulp = std::ldexp(1.0L, exponent - std::numeric_limits<Float>::digits);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

// sin(pi t) (cosine 0) or cos(pi t) (cosine 1) in long double, after the
// exact reduction t = j / 2 + r: sinl(pi * t) itself loses all relative
// accuracy near the zeros at the multiples of 1.
long double sincospi_reference(long double t, int cosine) {
  const long double pi = 3.141592653589793238462643383279502884L;
  const long double j = std::rint(2 * t);
  const long double r = t - j / 2;
  const long long q = static_cast<long long>(j) + cosine;
  const long double v = q % 2 ? std::cos(pi * r) : std::sin(pi * r);
  return q % 4 >= 2 ? -v : v;
}

// 2^20 words spread over all 2^32, and those at both ends.
std::vector<unsigned int> sample_words() {
  std::vector<unsigned int> ws;
  for (std::uint64_t w = 0; w <= 0xffffffffull; w += 4099) ws.push_back(static_cast<unsigned>(w));
  for (unsigned int k = 0; k < 1024; ++k) {
    ws.push_back(k);
    ws.push_back(0xffffffffu - k);
  }
  return ws;
}

const std::uint64_t kSeeds[] = {0, 42, 0x0123456789abcdefull};
const std::uint64_t kStreams[] = {0, 3, 0xfedcba9876543210ull};

}  // namespace

TEST_CASE("philox4x32_10 matches Random123's known-answer vectors", "[host][philox]") {
  for (const Kat& kat : kKats) {
    nf_u32x4 out = nf_philox4x32_10(kat.ctr, kat.key0, kat.key1);
    CHECK(out.x == kat.expected.x);
    CHECK(out.y == kat.expected.y);
    CHECK(out.z == kat.expected.z);
    CHECK(out.w == kat.expected.w);
  }
}

TEST_CASE("philox constants are cuRAND's", "[host][philox]") {
  CHECK(0x1p-32f == 2.3283064e-10f);         // CURAND_2POW32_INV
  CHECK(0x1p-53 == 1.1102230246251565e-16);  // CURAND_2POW53_INV_DOUBLE
}

TEST_CASE(
    "nf_uniform_f32 is cuRAND's _curand_uniform and lies in the half-open unit interval (0 "
    "excluded, 1 included)",
    "[host][philox]") {
  CHECK(nf_uniform_f32(0u) == 0x1p-33f);
  CHECK(nf_uniform_f32(0u) > 0.0f);
  CHECK(nf_uniform_f32(0xffffffffu) == 1.0f);
  CHECK(nf_uniform_f32(0xffffffffu) <= 1.0f);

  // The fused form equals the unfused one everywhere; sample the whole range
  // and check both ends densely, where rounding reaches 2^-33 and 1.
  std::vector<unsigned int> xs;
  for (std::uint64_t x = 0; x <= 0xffffffffull; x += 65521)
    xs.push_back(static_cast<unsigned int>(x));
  for (unsigned int k = 0; k < 100000; ++k) {
    xs.push_back(k);
    xs.push_back(0xffffffffu - k);
  }
  std::size_t mismatches = 0, out_of_range = 0;
  for (unsigned int x : xs) {
    float u = nf_uniform_f32(x);
    if (bits_of(u) != bits_of(curand_uniform_unfused(x))) ++mismatches;
    if (!(u > 0.0f && u <= 1.0f)) ++out_of_range;
  }
  CHECK(mismatches == 0);
  CHECK(out_of_range == 0);
}

TEST_CASE(
    "nf_uniform_f64 is cuRAND's _curand_uniform_double_hq and lies in the half-open unit interval "
    "(0 excluded, 1 included)",
    "[host][philox]") {
  CHECK(nf_uniform_f64(0u, 0u) == 0x1p-54);
  CHECK(nf_uniform_f64(1u, 0u) == 0x1.8p-53);
  // y's low 11 bits overlap x's high 11 bits: z = x ^ (y << 21).
  CHECK(nf_uniform_f64(0u, 1u) == 0x1p-32 + 0x1p-54);
  CHECK(nf_uniform_f64(0x00200000u, 1u) == 0x1p-54);
  // z = 2^53 - 1, the largest: 1 - 2^-54 rounds (to even) to 1.
  CHECK(nf_uniform_f64(0x001fffffu, 0xffffffffu) == 1.0);
  CHECK(nf_uniform_f64(0xffffffffu, 0xffffffffu) < 1.0);
  CHECK(nf_uniform_f64(0xffffffffu, 0xffffffffu) > 0.99);
}

TEST_CASE("nf_log_f32 and nf_log_f64 are within 1 ulp of log on the unit interval",
          "[host][philox]") {
  CHECK(bits_of(nf_log_f32(1.0f)) == bits_of(0.0f));
  CHECK(bits_of(nf_log_f64(1.0)) == bits_of(0.0));
  CHECK(nf_log_f32(0.5f) == -0x1.62e430p-1f);  // log(2), rounded
  CHECK(nf_log_f64(0.5) == -0x1.62e42fefa39efp-1);

  // Every binade of the uniforms, 2^-33 .. 1 for f32 and 2^-54 .. 1 for f64.
  double worst32 = 0;
  std::vector<float> us;
  for (unsigned int x : sample_words()) us.push_back(nf_uniform_f32(x));
  for (std::uint32_t b = bits_of(0x1p-33f); b <= bits_of(1.0f); b += 263) {
    float u;
    std::memcpy(&u, &b, sizeof u);
    us.push_back(u);
  }
  for (float u : us) {
    worst32 = std::max(worst32, ulp_error(nf_log_f32(u), std::log(static_cast<long double>(u))));
  }
  double worst64 = 0;
  std::vector<double> ds = {nf_uniform_f64(0u, 0u), nf_uniform_f64(0x001fffffu, 0xffffffffu)};
  for (std::uint64_t b = 0; b < (1 << 18); ++b) {
    nf_u32x4 r = block_words(7, 0, b);
    const double u = nf_uniform_f64(r.x, r.y);
    for (int e : {0, 1, static_cast<int>(r.z % 54), static_cast<int>(r.w % 54)}) {
      ds.push_back(std::max(std::ldexp(u, -e), 0x1p-54));
    }
  }
  for (double u : ds) {
    worst64 = std::max(worst64, ulp_error(nf_log_f64(u), std::log(static_cast<long double>(u))));
  }
  INFO("max error: f32 " << worst32 << " ulp, f64 " << worst64 << " ulp");
  CHECK(worst32 <= 1.0);
  CHECK(worst64 <= 1.0);
}

TEST_CASE("nf_sincospi_f32 and nf_sincospi_f64 are within 1.1 ulp and exact at multiples of 1/2",
          "[host][philox]") {
  for (int k = 0; k <= 4; ++k) {
    const float t = 0.5f * static_cast<float>(k);
    const float sine[] = {0.0f, 1.0f, 0.0f, -1.0f, 0.0f};
    const float cosine[] = {1.0f, 0.0f, -1.0f, 0.0f, 1.0f};
    INFO("t = " << t);
    CHECK(nf_sincospi_f32(t, 0) == sine[k]);
    CHECK(nf_sincospi_f32(t, 1) == cosine[k]);
    CHECK(nf_sincospi_f64(t, 0) == sine[k]);
    CHECK(nf_sincospi_f64(t, 1) == cosine[k]);
  }

  // The angles of the normals, t in (0, 2], and every binade of small t.
  std::vector<float> ts;
  for (unsigned int y : sample_words()) ts.push_back(nf_box_muller_angle_f32(y));
  for (std::uint32_t b = bits_of(0x1p-40f); b <= bits_of(2.0f); b += 509) {
    float t;
    std::memcpy(&t, &b, sizeof t);
    ts.push_back(t);
  }
  double worst32 = 0;
  for (float t : ts) {
    for (int cosine : {0, 1}) {
      const long double ref = sincospi_reference(t, cosine);
      if (ref != 0) worst32 = std::max(worst32, ulp_error(nf_sincospi_f32(t, cosine), ref));
    }
  }
  double worst64 = 0;
  for (std::uint64_t b = 0; b < (1 << 19); ++b) {
    nf_u32x4 r = block_words(9, 0, b);
    const double v = nf_box_muller_angle_f64(r.x, r.y);
    for (double t : {v, std::ldexp(v, -static_cast<int>(r.z % 64))}) {
      for (int cosine : {0, 1}) {
        const long double ref = sincospi_reference(t, cosine);
        if (ref != 0) worst64 = std::max(worst64, ulp_error(nf_sincospi_f64(t, cosine), ref));
      }
    }
  }
  INFO("max error: f32 " << worst32 << " ulp, f64 " << worst64 << " ulp");
  CHECK(worst32 <= 1.1);
  CHECK(worst64 <= 1.1);
}

TEST_CASE("Box-Muller outputs are finite at the extreme words", "[host][philox]") {
  // u = 1 gives radius 0; u = 2^-33 (f32) or 2^-54 (f64) gives the largest.
  CHECK(nf_box_muller_radius_f32(0xffffffffu) == 0.0f);
  CHECK(nf_box_muller_radius_f64(0x001fffffu, 0xffffffffu) == 0.0);
  CHECK(nf_box_muller_radius_f32(0u) == Approx(std::sqrt(66.0 * std::log(2.0))).epsilon(1e-6));
  CHECK(nf_box_muller_radius_f64(0u, 0u) == Approx(std::sqrt(108.0 * std::log(2.0))));
  // The angle pi t has t in (0, 2].
  CHECK(nf_box_muller_angle_f32(0u) == 0x1p-32f);
  CHECK(nf_box_muller_angle_f32(0xffffffffu) == 2.0f);
  CHECK(nf_box_muller_angle_f64(0u, 0u) == 0x1p-53);
  CHECK(nf_box_muller_angle_f64(0x001fffffu, 0xffffffffu) == 2.0);

  nf_f32x2 a = nf_box_muller_f32(0u, 0x40000200u);  // angle just over pi / 2
  CHECK(std::isfinite(a.x));
  CHECK(std::isfinite(a.y));
  CHECK(a.x * a.x + a.y * a.y == Approx(66.0 * std::log(2.0)).epsilon(1e-5));
  CHECK(a.x > 0.0f);
  CHECK(a.y < 0.0f);
  nf_f64x2 b = nf_box_muller_f64(0u, 0u, 0u, 0x40000000u);  // angle just over pi / 2
  CHECK(b.x * b.x + b.y * b.y == Approx(108.0 * std::log(2.0)));
  CHECK(b.x > 0.0);
  CHECK(b.y < 0.0);
  for (unsigned int x : {0u, 1u, 0xfffffffeu, 0xffffffffu}) {
    for (unsigned int y : {0u, 0x3fffffffu, 0x7fffffffu, 0xbfffffffu, 0xffffffffu}) {
      nf_f32x2 n = nf_box_muller_f32(x, y);
      nf_f64x2 n64 = nf_box_muller_f64(x, x, y, y);
      CHECK(std::isfinite(n.x));
      CHECK(std::isfinite(n.y));
      CHECK(std::isfinite(n64.x));
      CHECK(std::isfinite(n64.y));
    }
  }
}

TEST_CASE("element i follows the documented block and lane layout", "[host][philox]") {
  for (std::uint64_t seed : kSeeds) {
    for (std::uint64_t stream : kStreams) {
      for (std::uint64_t i : layout_indices()) {
        INFO("seed " << seed << " stream " << stream << " i " << i);
        nf_u32x4 r4 = block_words(seed, stream, i / 4);
        unsigned int lanes[4] = {r4.x, r4.y, r4.z, r4.w};
        unsigned int lane = static_cast<unsigned int>(i % 4);

        CHECK(bits_of(nf_rand_uniform_f32(seed, stream, i)) ==
              bits_of(nf_uniform_f32(lanes[lane])));

        nf_f32x2 pair = lane < 2 ? nf_box_muller_f32(r4.x, r4.y) : nf_box_muller_f32(r4.z, r4.w);
        float normal = lane % 2 == 0 ? pair.x : pair.y;
        CHECK(bits_of(nf_rand_normal_f32(seed, stream, i)) == bits_of(normal));

        nf_u32x4 r2 = block_words(seed, stream, i / 2);
        double uniform64 = i % 2 == 0 ? nf_uniform_f64(r2.x, r2.y) : nf_uniform_f64(r2.z, r2.w);
        CHECK(bits_of(nf_rand_uniform_f64(seed, stream, i)) == bits_of(uniform64));

        nf_f64x2 pair64 = nf_box_muller_f64(r2.x, r2.y, r2.z, r2.w);
        double normal64 = i % 2 == 0 ? pair64.x : pair64.y;
        CHECK(bits_of(nf_rand_normal_f64(seed, stream, i)) == bits_of(normal64));
      }
    }
  }
}

TEST_CASE("seed and stream both select the words", "[host][philox]") {
  // The key is (seed low, seed high) and the counter's upper half is the
  // stream: flipping a bit in any of those 32-bit halves changes the block.
  nf_u32x4 base = nf_philox_block(0x0000000100000001ull, 0x0000000100000001ull, 7);
  nf_u32x4 variants[] = {
      nf_philox_block(0x0000000100000000ull, 0x0000000100000001ull, 7),
      nf_philox_block(0x0000000000000001ull, 0x0000000100000001ull, 7),
      nf_philox_block(0x0000000100000001ull, 0x0000000100000000ull, 7),
      nf_philox_block(0x0000000100000001ull, 0x0000000000000001ull, 7),
      nf_philox_block(0x0000000100000001ull, 0x0000000100000001ull, 7 + (1ull << 32)),
  };
  for (const nf_u32x4& v : variants) {
    CHECK((v.x != base.x || v.y != base.y || v.z != base.z || v.w != base.w));
  }
  nf_u32x4 expected = nf_philox4x32_10({7, 0, 1, 1}, 1, 1);
  CHECK(base.x == expected.x);
  CHECK(base.y == expected.y);
  CHECK(base.z == expected.z);
  CHECK(base.w == expected.w);
}
