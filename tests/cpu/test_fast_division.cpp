// fast_divisor (jit/codegen/fast_division.cpp): the multiplier and shift a
// collapsed walk divides indices by, checked against the division they stand
// for on every kind of divisor and index, at the ends of the index range.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "codegen/fast_division.hpp"

namespace {

void check_divisor(std::int64_t d, bool index64, std::mt19937_64& gen) {
  const nf::jit::FastDivisor f = nf::jit::fast_divisor(d, index64);
  const std::int64_t top = index64 ? INT64_MAX : INT32_MAX;
  // Around d and its last multiple below the top, no value past the top.
  std::vector<std::int64_t> xs = {0, 1, d - 1, d, top, top - 1, top / d * d, top / d * d - 1};
  if (d < top) xs.push_back(d + 1);
  for (int i = 0; i < 200; ++i) xs.push_back(std::int64_t(gen() % std::uint64_t(top)));
  for (std::int64_t x : xs) {
    if (x < 0) continue;
    INFO("x " << x << " d " << d << (index64 ? " (64-bit)" : " (32-bit)"));
    CHECK(nf::jit::fast_divide(x, f, index64) == x / d);
  }
}

}  // namespace

TEST_CASE("fast division matches integer division for every divisor kind", "[host][codegen]") {
  std::mt19937_64 gen(20261126);
  for (const bool index64 : {false, true}) {
    const std::int64_t top = index64 ? INT64_MAX : INT32_MAX;
    std::vector<std::int64_t> ds = {1, 2, 3, 5, 7, 8, 255, 256, 1000, 4095, 4096, 65537, top};
    for (int i = 0; i < 200; ++i) ds.push_back(1 + std::int64_t(gen() % std::uint64_t(top)));
    for (int i = 0; i < 50; ++i) ds.push_back(1 + std::int64_t(gen() % 100000));
    for (std::int64_t d : ds) check_divisor(d, index64, gen);
  }
  CHECK(nf::jit::fast_divisor(1, false).shift == 0);
  CHECK_THROWS(nf::jit::fast_divisor(0, false));
}
