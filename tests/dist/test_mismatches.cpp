// Ranks that pass different things to a collective: every rank throws the
// same typed error, naming what each rank passed, no array changes, and the
// collectives after it still meet.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

#include "error_message.hpp"

using Catch::Matchers::Contains;
using nf::dist::Op;
using nf::test::message_of;

namespace {

// The ranks are still in step: a collective after the error gives the
// right answer on every rank.
void check_still_in_step() {
  const double got = nf::dist::all_reduce(nf::full({2}, 1.0)).to_vector<double>()[1];
  CHECK(got == nf::dist::size());
}

bool alone() {
  return nf::dist::size() == 1;
}

}  // namespace

TEST_CASE("ranks passing different shapes all throw ShapeError naming each rank's shape") {
  if (alone()) return;
  const int rank = nf::dist::rank();
  const nf::Array x = nf::randn({rank == 1 ? 4 : 3, 2});
  const std::vector<float> before = x.to_vector<float>();
  const std::string m = message_of<nf::ShapeError>([&] { nf::dist::all_reduce(x, Op::sum); });
  CHECK_THAT(m, Contains("different shapes"));
  CHECK_THAT(m, Contains("rank 1: all_reduce(sum) of (4, 2) f32"));
  CHECK_THAT(m, Contains("rank 0") || Contains("ranks 0, 2"));
  CHECK_THAT(m, Contains("of (3, 2) f32"));
  CHECK(x.to_vector<float>() == before);
  check_still_in_step();
}

TEST_CASE("shapes of more axes than a rank sends whole are named as far as sent") {
  if (alone()) return;
  const nf::Shape nine{1, 1, 1, 1, 1, 1, 1, 2, nf::dist::rank() == 1 ? 3 : 2};
  const std::string m = message_of<nf::ShapeError>([&] { nf::dist::all_reduce(nf::ones(nine)); });
  CHECK_THAT(m, Contains("all_reduce(sum) of (1, 1, 1, 1, 1, 1, 1, 2, ...) f32"));
  check_still_in_step();
}

TEST_CASE("ranks passing different dtypes all throw DTypeError naming each rank's dtype") {
  if (alone()) return;
  const nf::Array x = nf::randn({5}, nf::dist::rank() == 0 ? nf::f16 : nf::f32);
  const std::string m = message_of<nf::DTypeError>([&] { nf::dist::all_gather(x); });
  CHECK_THAT(m, Contains("different dtypes"));
  CHECK_THAT(m, Contains("rank 0: all_gather of (5,) f16"));
  CHECK_THAT(m, Contains("all_gather of (5,) f32"));
  check_still_in_step();
}

TEST_CASE("ranks calling different collectives, ops or roots all throw ValueError") {
  if (alone()) return;
  const int rank = nf::dist::rank();
  const nf::Array x = nf::randn({3});
  std::string m = message_of<nf::ValueError>([&] {
    if (rank == 0) {
      nf::dist::all_reduce(x, Op::sum);
    } else {
      nf::dist::broadcast(x, 0);
    }
  });
  CHECK_THAT(m, Contains("different collectives"));
  CHECK_THAT(m, Contains("rank 0: all_reduce(sum) of (3,) f32"));
  CHECK_THAT(m, Contains("broadcast(root 0) of (3,) f32"));

  m = message_of<nf::ValueError>([&] { nf::dist::all_reduce(x, rank == 0 ? Op::max : Op::min); });
  CHECK_THAT(m, Contains("all_reduce(max)"));
  CHECK_THAT(m, Contains("all_reduce(min)"));

  m = message_of<nf::ValueError>([&] { nf::dist::broadcast(x, rank == 0 ? 0 : 1); });
  CHECK_THAT(m, Contains("broadcast(root 0)"));
  CHECK_THAT(m, Contains("broadcast(root 1)"));
  check_still_in_step();
}

TEST_CASE("a fault in one rank's out throws there, and ValueError on every other rank") {
  if (alone()) return;
  const int rank = nf::dist::rank();
  const nf::Array x = nf::randn({4, 3});
  nf::Array out = nf::zeros({rank == 1 ? 3 : 4, 3});
  if (rank == 1) {
    const std::string m =
        message_of<nf::ShapeError>([&] { nf::dist::all_reduce(x, Op::sum, out); });
    CHECK_THAT(m, Contains("out has shape (3, 3)"));
  } else {
    const std::string m =
        message_of<nf::ValueError>([&] { nf::dist::all_reduce(x, Op::sum, out); });
    CHECK_THAT(m, Contains("rank 1 could not take part in all_reduce(sum) of (4, 3) f32"));
  }
  CHECK(out.to_vector<float>() == std::vector<float>(out.size(), 0.f));
  check_still_in_step();
}

TEST_CASE("collectives refuse what no rank can do, on every rank alike") {
  const nf::Array ints = nf::arange(6);
  std::string m = message_of<nf::DTypeError>([&] { nf::dist::all_reduce(ints, Op::mean); });
  CHECK_THAT(m, Contains("all_reduce(mean) of (6,) i64"));
  CHECK_THAT(m, Contains("floating dtype"));

  if (!alone()) {
    const std::int64_t odd = 2 * nf::dist::size() + 1;
    m = message_of<nf::ShapeError>([&] { nf::dist::reduce_scatter(nf::randn({odd, 2}), Op::sum); });
    CHECK_THAT(m, Contains("reduce_scatter(sum) of (" + std::to_string(odd) + ", 2) f32"));
    CHECK_THAT(m, Contains("equal parts"));
  }
  message_of<nf::ShapeError>([&] { nf::dist::reduce_scatter(nf::full({}, 1.0), Op::sum); });

  m = message_of<nf::ValueError>([&] { nf::dist::broadcast(ints, nf::dist::size()); });
  CHECK_THAT(m, Contains("root must be a rank"));
  message_of<nf::ValueError>([&] { nf::dist::broadcast(ints, -1); });

  nf::Array strided = nf::zeros({4, 6})(nf::all, nf::slice(0, nf::none, 2));
  m = message_of<nf::ValueError>([&] {
    nf::dist::all_reduce(nf::randn({4, 3}), Op::sum, strided);
  });
  CHECK_THAT(m, Contains("contiguous"));
  check_still_in_step();
}

TEST_CASE("lists of arrays that differ between ranks, or within one, are refused everywhere") {
  const int rank = nf::dist::rank();
  const nf::Array a = nf::randn({4}), b = nf::randn({2, 3});
  if (!alone()) {
    std::string m = message_of<nf::ValueError>([&] {
      if (rank == 0) {
        nf::dist::all_reduce({a, b});
      } else {
        nf::dist::all_reduce({a, b, a});
      }
    });
    CHECK_THAT(m, Contains("rank 0: all_reduce(sum) of 2 arrays (10 elements) f32"));
    CHECK_THAT(m, Contains("all_reduce(sum) of 3 arrays (14 elements) f32"));
    m = message_of<nf::ShapeError>([&] {
      nf::dist::all_reduce({a, rank == 0 ? nf::Expr(b) : nf::Expr(nf::randn({3, 2}))});
    });
    CHECK_THAT(m, Contains("lists of arrays of different shapes"));
  }
  const std::string m = message_of<nf::DTypeError>([&] {
    nf::dist::all_reduce({a, nf::astype(b, nf::f16)});
  });
  CHECK_THAT(m, Contains("one dtype and device"));
  CHECK_THAT(m, Contains("f32 on"));
  check_still_in_step();
}
