// Errors are typed, name what was wrong, and leave every array unchanged.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using nf::Array;

namespace {

using nf::test::message_of;

}  // namespace

TEST_CASE("shapes that do not broadcast raise ShapeError naming both shapes and the op",
          "[errors]") {
  Array a = nf::ones({3, 4}), b = nf::ones({5});
  const std::string m = message_of<nf::ShapeError>([&] { (void)(a + b); });
  CHECK_THAT(m, Contains("(3, 4)") && Contains("(5,)") && Contains("add"));
  CHECK_THROWS_AS(nf::where(nf::ones({2}) > 0, a, a), nf::ShapeError);
  CHECK_THROWS_AS(nf::matmul(a, a), nf::ShapeError);
  CHECK_THAT(message_of<nf::ShapeError>([&] {
               (void)nf::dot(a, nf::ones({3, 2}));
             }),
             Contains("(3, 4)") && Contains("(3, 2)"));
  CHECK_THROWS_AS(nf::sum(a, 2), nf::ShapeError);
  CHECK_THROWS_AS(nf::mean(a, {0, -2}), nf::ShapeError);
  CHECK_THROWS_AS(nf::reshape(a, {5, -1}), nf::ShapeError);
  CHECK_THROWS_AS(nf::zeros({2, -1}), nf::ShapeError);
}

TEST_CASE("dtype errors are typed", "[errors]") {
  Array b = nf::ones({3}, nf::bool_);
  CHECK_THAT(message_of<nf::DTypeError>([&] { (void)(b - b); }),
             Contains("subtract") && Contains("bool"));
  CHECK_THROWS_AS(-b, nf::DTypeError);
  CHECK_THROWS_AS(nf::rand({2}, nf::i32), nf::DTypeError);
  CHECK_THAT(message_of<nf::ValueError>([&] { (void)(nf::ones({2}, nf::u8) + 300); }),
             Contains("300") && Contains("u8"));
  CHECK_THROWS_AS(nf::max(nf::ones({0, 3}), 0), nf::ValueError);
}

TEST_CASE("a failed statement leaves its target unchanged", "[errors]") {
  const std::vector<double> before{1, 2, 3, 4, 5, 6};
  Array a = nf::array(before, {2, 3});
  Array alias = a;
  Array bad = nf::ones({4});

  CHECK_THROWS_AS(a = a + bad, nf::ShapeError);
  CHECK_THROWS_AS(a += bad, nf::ShapeError);
  CHECK_THROWS_AS(a(nf::all, nf::slice(0, 2)) = bad, nf::ShapeError);
  CHECK_THROWS_AS(a(0) = nf::ones({2, 3}), nf::ShapeError);  // would need to shrink
  Array ai = nf::array(std::vector<std::int32_t>{1, 2, 3});
  CHECK_THAT(message_of<nf::DTypeError>([&] { ai += 0.5; }), Contains("i32") && Contains("f64"));
  CHECK_THAT(ai.to_vector<double>(), Equals(std::vector<double>{1, 2, 3}));
  CHECK_THROWS_AS(a = nf::max(a(nf::slice(0, 0)), 0), nf::ValueError);

  CHECK(a.storage() == alias.storage());
  CHECK(a.shape() == nf::Shape{2, 3});
  CHECK_THAT(a.to_vector<double>(), Equals(before));
}
