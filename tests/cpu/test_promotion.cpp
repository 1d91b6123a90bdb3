// NumPy 2 promotion (NEP 50): array dtypes promote by table, C++ scalars are
// weak. The expected table is written out by hand from numpy's behaviour.
#include <catch2/catch.hpp>
#include <map>
#include <utility>

#include <numfuse/numfuse.hpp>

using nf::DType;

TEST_CASE("promote_types follows numpy's table", "[promotion]") {
  using nf::bf16, nf::bool_, nf::f16, nf::f32, nf::f64, nf::i32, nf::i64, nf::u8;
  const std::map<std::pair<DType, DType>, DType> expected{
      {{bool_, bool_}, bool_}, {{bool_, u8}, u8},   {{bool_, i32}, i32}, {{bool_, f16}, f16},
      {{bool_, bf16}, bf16},   {{bool_, f64}, f64}, {{u8, i32}, i32},    {{u8, i64}, i64},
      {{u8, f16}, f16},        {{u8, bf16}, bf16},  {{u8, f32}, f32},    {{i32, i64}, i64},
      {{i32, f16}, f64},       {{i32, f32}, f64},   {{i64, f32}, f64},   {{i64, bf16}, f64},
      {{f16, bf16}, f32},      {{f16, f32}, f32},   {{bf16, f32}, f32},  {{f32, f64}, f64},
      {{f16, f64}, f64},       {{i64, f64}, f64},   {{i32, i32}, i32},   {{bf16, bf16}, bf16},
  };
  for (const auto& [pair, result] : expected) {
    INFO(nf::name(pair.first) << " with " << nf::name(pair.second));
    CHECK(nf::promote_types(pair.first, pair.second) == result);
    CHECK(nf::promote_types(pair.second, pair.first) == result);
  }
}

TEST_CASE("C++ scalars are weak", "[promotion]") {
  nf::Array f = nf::ones({2}, nf::f32), h = nf::ones({2}, nf::f16), i = nf::ones({2}, nf::i32);
  nf::Array u = nf::ones({2}, nf::u8), b = nf::ones({2}, nf::bool_);
  CHECK((f * 0.5).dtype() == nf::f32);
  CHECK((h * 0.5).dtype() == nf::f16);
  CHECK((f * 2).dtype() == nf::f32);
  CHECK((i + 1).dtype() == nf::i32);
  CHECK((i * 0.5).dtype() == nf::f64);
  CHECK((u + 1).dtype() == nf::u8);
  CHECK((b + 1).dtype() == nf::i64);
  CHECK((b * 1.5).dtype() == nf::f64);
  CHECK((b && true).dtype() == nf::bool_);
  CHECK((i / 2).dtype() == nf::f64);  // true division
  CHECK((u / u).dtype() == nf::f64);
  CHECK(nf::sqrt(u).dtype() == nf::f16);
  CHECK(nf::sqrt(i).dtype() == nf::f64);
  CHECK((f < 1).dtype() == nf::bool_);
  CHECK(nf::Array(u + 255).to_vector<int>() == std::vector<int>{0, 0});  // wraps, like numpy
  CHECK_THROWS_AS(u + 256, nf::ValueError);
  CHECK_THROWS_AS(u - (-1), nf::ValueError);
  CHECK(nf::Array(nf::Expr(1) + 2).dtype() == nf::i64);
  CHECK(nf::Array(nf::Expr(1) + 2.0).dtype() == nf::f64);
}
