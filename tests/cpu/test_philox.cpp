// The shared Philox runtime header: known answers, cuRAND's value transforms
// and the (seed, stream, i) layout that both backends must follow.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
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

const std::uint64_t kSeeds[] = {0, 42, 0x0123456789abcdefull};
const std::uint64_t kStreams[] = {0, 3, 0xfedcba9876543210ull};

}  // namespace

TEST_CASE("philox4x32_10 matches Random123's known-answer vectors", "[philox]") {
  for (const Kat& kat : kKats) {
    nf_u32x4 out = nf_philox4x32_10(kat.ctr, kat.key0, kat.key1);
    CHECK(out.x == kat.expected.x);
    CHECK(out.y == kat.expected.y);
    CHECK(out.z == kat.expected.z);
    CHECK(out.w == kat.expected.w);
  }
}

TEST_CASE("philox constants are cuRAND's", "[philox]") {
  CHECK(0x1p-32f == 2.3283064e-10f);                      // CURAND_2POW32_INV
  CHECK(0x1.921fb6p-30f == 2.3283064e-10f * 6.2831855f);  // CURAND_2POW32_INV_2PI
  CHECK(0x1.921fb6p-31f == 2.3283064e-10f * 6.2831855f / 2);
  CHECK(0x1p-53 == 1.1102230246251565e-16);  // CURAND_2POW53_INV_DOUBLE
}

TEST_CASE("nf_uniform_f32 is cuRAND's _curand_uniform and lies in the half-open unit interval (0 excluded, 1 included)", "[philox]") {
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

TEST_CASE("nf_uniform_f64 is cuRAND's _curand_uniform_double_hq and lies in the half-open unit interval (0 excluded, 1 included)", "[philox]") {
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

TEST_CASE("Box-Muller outputs are finite at the extreme words", "[philox]") {
  // u = 1 gives radius 0; u = 2^-33 (f32) or 2^-54 (f64) gives the largest.
  CHECK(nf_box_muller_radius_f32(0xffffffffu) == 0.0f);
  CHECK(nf_box_muller_radius_f32(0u) == Approx(std::sqrt(66.0 * std::log(2.0))).epsilon(1e-6));
  CHECK(nf_box_muller_radius_f64(0u, 0u) == Approx(std::sqrt(108.0 * std::log(2.0))));
  // The angle lies in (0, 2pi].
  CHECK(nf_box_muller_angle_f32(0u) > 0.0f);
  CHECK(nf_box_muller_angle_f32(0xffffffffu) <= 6.2831855f);
  CHECK(nf_box_muller_angle_f64(0u, 0u) > 0.0);
  CHECK(nf_box_muller_angle_f64(0x001fffffu, 0xffffffffu) <= 2 * 3.1415926535897932);

  nf_f32x2 a = nf_box_muller_f32(0u, 0x40000000u);  // angle just over pi / 2
  CHECK(std::isfinite(a.x));
  CHECK(std::isfinite(a.y));
  CHECK(a.x * a.x + a.y * a.y == Approx(66.0 * std::log(2.0)).epsilon(1e-5));
  nf_f64x2 b = nf_box_muller_f64(0u, 0u, 0u, 0x40000000u);  // angle just over pi / 2
  CHECK(b.x * b.x + b.y * b.y == Approx(108.0 * std::log(2.0)));
  CHECK(b.x > 0.0);
  CHECK(b.y < 0.0);
}

TEST_CASE("element i follows the documented block and lane layout", "[philox]") {
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

TEST_CASE("seed and stream both select the words", "[philox]") {
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
