// What generated reduction kernels compute, without a GPU: each kernel runs
// in the emulator (kernel_emulator.hpp) over host arrays, against the CPU
// backend on the same random data. Every walk a kernel can take is covered:
// rows held in registers or read again per pass, with and without vectors;
// columns; several reduced dims; everything to one value.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"
#include "statements.hpp"

#include "codegen/reduce_spec.hpp"
#include "emulated_program.hpp"
#include "plan/schedule.hpp"

using nf::test::layernorm;
using nf::test::softmax;

namespace {

// How a kernel walked its step, for tests that check the walk they meant.
struct Walk {
  int cluster = 1;
  bool prefetch = false;
  int per = 0;      // groups a thread holds
  int kernels = 1;  // more than one: split across blocks
  bool shared = false;
  bool words = false;
  bool staged = false;
  bool reverse = false;
  int vec = 1;
  bool shifted = false;
  bool covered = false;
  bool pairs = false;
  bool run_lanes = false;
};

// Runs `roots`, one reduction step, in the emulator, writing `outputs` (new
// arrays where none are given). `walk`: where to say how it walked.
std::vector<nf::Array> emulate(const std::vector<nf::Expr>& roots,
                               std::vector<nf::Array> outputs = {},
                               const nf::jit::ReduceLimits& limits = nf::jit::ReduceLimits{},
                               Walk* walk = nullptr) {
  nf::test::EmulatedRun run;
  outputs = nf::test::emulate(roots, std::move(outputs), limits, &run);
  REQUIRE(run.steps.size() == 1);
  REQUIRE(run.steps[0].kind == nf::StepKind::reduction);
  if (walk) {
    const nf::test::EmulatedStep& step = run.steps[0];
    *walk = {step.cluster, step.prefetch, step.per,      step.kernels, step.shared,
             step.words,   step.staged,   step.reverse,  step.vec,     step.shifted,
             step.covered, step.pairs,    step.run_lanes};
  }
  return outputs;
}

// Limits that take rows to each walk of their own: held in registers (up to
// `max_held` groups a thread), read again each pass, and split into chunks
// of `chunk_groups` groups.
std::vector<std::pair<const char*, nf::jit::ReduceLimits>> row_walks(int max_held,
                                                                     int chunk_groups) {
  nf::jit::ReduceLimits held;
  held.max_held = max_held;
  nf::jit::ReduceLimits streamed;
  streamed.max_held = 0;
  streamed.split_below = 0;
  nf::jit::ReduceLimits split = streamed;
  split.split_below = 128;
  split.chunk_groups = chunk_groups;
  return {{"held", held}, {"streamed", streamed}, {"split", split}};
}

// An array reduced over several axes, and the elements a group it takes.
struct RunsCase {
  nf::Array x;
  nf::Axes axes;
  int vec;
};

// Close in the dtype's precision; NaNs and infinities where the reference has
// them. Reports the first element that is not.
void check_close(const nf::Array& got, const nf::Array& want, double rel) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = nf::Array(nf::astype(got, nf::f64)).to_vector<double>();
  const std::vector<double> w = nf::Array(nf::astype(want, nf::f64)).to_vector<double>();
  std::size_t bad = g.size();
  for (std::size_t i = 0; i < g.size() && bad == g.size(); ++i) {
    const bool ok = w[i] != w[i]       ? g[i] != g[i]
                    : std::isinf(w[i]) ? g[i] == w[i]
                                       : std::fabs(g[i] - w[i]) <= rel * (1 + std::fabs(w[i]));
    if (!ok) bad = i;
  }
  INFO("element " << bad << ": " << (bad < g.size() ? g[bad] : 0.0) << " where "
                  << (bad < g.size() ? w[bad] : 0.0) << " was expected");
  CHECK(bad == g.size());
}

}  // namespace

TEST_CASE("emulated: the mission line over rows held in registers and read again",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (const nf::Shape& shape : {nf::Shape{37, 300}, nf::Shape{5, 101}, nf::Shape{2, 40000}}) {
    INFO(nf::to_string(shape));
    nf::Array a = nf::randn(shape) * 3 + 1.5f;
    check_close(emulate({layernorm(a)})[0], nf::Array(layernorm(a)), 1e-4);
  }
}

TEST_CASE("emulated: softmax, logsumexp and x - max(x, 1)", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::Array a = nf::randn({33, 101}) * 4;
  check_close(emulate({softmax(a)})[0], nf::Array(softmax(a)), 1e-5);
  check_close(emulate({nf::logsumexp(a, 1)})[0], nf::Array(nf::logsumexp(a, 1)), 1e-5);
  check_close(emulate({a - nf::max(a, 1)})[0], nf::Array(a - nf::max(a, 1)), 1e-6);
}

TEST_CASE("emulated: columns, several reduced dims and full reductions",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::Array a = nf::rand({50, 37}) + 0.5f;
  check_close(emulate({a / nf::sum(a, 0)})[0], nf::Array(a / nf::sum(a, 0)), 1e-5);
  check_close(emulate({nf::mean(a.T(), 1)})[0], nf::Array(nf::mean(a.T(), 1)), 1e-5);
  nf::Array b = nf::randn({7, 13, 5}, nf::f64);
  check_close(emulate({nf::var(b, {0, 2}, 1)})[0], nf::Array(nf::var(b, {0, 2}, 1)), 1e-12);
  check_close(emulate({nf::std(b, 1)})[0], nf::Array(nf::std(b, 1)), 1e-12);
  check_close(emulate({nf::sum(b)})[0], nf::Array(nf::sum(b)), 1e-12);
  nf::Array c = nf::randn({3, 70000});
  check_close(emulate({nf::mean(c)})[0], nf::Array(nf::mean(c)), 1e-4);
}

TEST_CASE("emulated: several reduced dims read in vectors along the innermost",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Runs of 12 floats: three vectors of 4; of 12 halves: three of 4, not 8
  // (a run does not start on 16 bytes). Runs that start elsewhere: the next
  // test.
  const std::vector<RunsCase> cases = {
      {nf::randn({6, 10, 12}) + 2.0f, {0, 2}, 4},
      {nf::astype(nf::randn({3, 5, 7, 12}), nf::f16), {1, 3}, 4},
      {nf::astype(nf::randn({3, 5, 7, 16}), nf::f16), {0, 1, 3}, 8},
  };
  for (const RunsCase& c : cases) {
    INFO(nf::to_string(c.x.shape()) << " " << nf::name(c.x.dtype()));
    const double rel = c.x.dtype() == nf::f16 ? 2e-3 : 1e-5;
    Walk walk;
    check_close(emulate({nf::sum(c.x, c.axes)}, {}, {}, &walk)[0],
                nf::Array(nf::sum(nf::astype(c.x, nf::f64), c.axes)), rel);
    CHECK(walk.vec == c.vec);
    // Broadcast back: the stores go out in vectors too.
    const nf::Expr centred = c.x - nf::mean(c.x, c.axes);
    check_close(emulate({centred}, {}, {}, &walk)[0], nf::Array(centred), rel);
    CHECK(walk.vec == c.vec);
    // Moments in one pass, and the rows read again for each pass.
    nf::jit::ReduceLimits streamed;
    streamed.max_held = 0;
    check_close(emulate({nf::var(c.x, c.axes)}, {}, streamed)[0],
                nf::Array(nf::var(nf::astype(c.x, nf::f64), c.axes)), rel);
  }
  // A view with a kept stride off the vector, broadcast back: an element at
  // a time.
  const nf::Array wide = nf::randn({6, 11, 12});
  const nf::Array view = wide(nf::slice(0, 6), nf::slice(0, 10), nf::slice(1, 9));
  const nf::Expr centred = view - nf::mean(view, nf::Axes{0, 2});
  Walk walk;
  check_close(emulate({centred}, {}, {}, &walk)[0], nf::Array(centred), 1e-5);
  CHECK(walk.vec == 1);
}

TEST_CASE("emulated: runs that start anywhere in a vector, read in the vectors that cover them",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Runs of odd length over several reduced dims: each starts at another
  // place in a vector (f32 in fours, f16 and bf16 in eights, f64 in twos).
  const nf::Array wide = nf::randn({5, 6, 9, 15}) * 2 + 1;
  const std::vector<RunsCase> cases = {
      {nf::randn({6, 10, 9}) * 2 + 1, {0, 2}, 4},
      {nf::astype(nf::randn({3, 5, 7, 13}) * 2, nf::f16), {1, 3}, 8},
      {nf::astype(nf::randn({4, 3, 6, 11}) * 2, nf::bf16), {0, 3}, 8},
      {nf::randn({5, 6, 7}, nf::f64), {0, 2}, 2},
      {nf::astype(nf::randn({3, 4, 5, 9}), nf::f16), {0, 2, 3}, 8},
      // A view from the second column: every run starts one element in.
      {wide(nf::all, nf::all, nf::all, nf::slice(1, 15)), {0, 3}, 4},
  };
  for (const RunsCase& c : cases) {
    INFO(nf::to_string(c.x.shape()) << " " << nf::name(c.x.dtype()));
    const bool half = nf::itemsize(c.x.dtype()) == 2;
    const double rel = half ? 8e-3 : c.x.dtype() == nf::f64 ? 1e-12 : 1e-5;
    const nf::Expr x64 = nf::astype(c.x, nf::f64);
    Walk walk;
    check_close(emulate({nf::sum(c.x, c.axes)}, {}, {}, &walk)[0], nf::Array(nf::sum(x64, c.axes)),
                rel);
    CHECK((walk.covered && walk.vec == c.vec && walk.per > 0));
    // Lanes outside the run take no part: the least and the greatest are
    // the run's own.
    check_close(emulate({nf::min(c.x, c.axes)})[0], nf::Array(nf::min(c.x, c.axes)), 0);
    check_close(emulate({nf::max(c.x, c.axes)})[0], nf::Array(nf::max(c.x, c.axes)), 0);
    check_close(emulate({nf::var(c.x, c.axes)})[0], nf::Array(nf::var(x64, c.axes)), rel);
    check_close(emulate({nf::logsumexp(c.x, c.axes)})[0], nf::Array(nf::logsumexp(x64, c.axes)),
                rel);
    // Broadcast back, the step writes elements: an element at a time.
    const nf::Expr centred = c.x - nf::mean(c.x, c.axes);
    check_close(emulate({centred}, {}, {}, &walk)[0], nf::Array(centred), rel);
    CHECK((!walk.covered && walk.vec == 1));
    // Read again in each pass (streamed): not covered.
    nf::jit::ReduceLimits streamed;
    streamed.max_held = 0;
    streamed.split_below = 0;
    check_close(emulate({nf::var(c.x, c.axes)}, {}, streamed, &walk)[0],
                nf::Array(nf::var(x64, c.axes)), rel);
    CHECK((!walk.covered && walk.per == 0));
  }
  // Two reads whose runs start at different places in a vector: an element
  // at a time.
  const nf::Array a = nf::randn({4, 6, 10});
  const nf::Array b = a(nf::all, nf::all, nf::slice(1, 10));
  const nf::Array c = a(nf::all, nf::all, nf::slice(0, 9));
  Walk walk;
  check_close(emulate({nf::sum(b * c, nf::Axes{0, 2})}, {}, {}, &walk)[0],
              nf::Array(nf::sum(b * c, nf::Axes{0, 2})), 1e-5);
  CHECK((!walk.covered && walk.vec == 1));
}

TEST_CASE("emulated: elements read one at a time over several reduced dims, more to a thread",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Rows of 60 runs of 101 (no vectors): 512 threads of 12 elements, where
  // one odd run about as long takes 1024 threads of 6 (read through a view
  // whose rows start elsewhere in a vector than the result's: no vectors).
  for (nf::DType dtype : {nf::f16, nf::f32}) {
    const nf::Array x = nf::astype(nf::randn({5, 60, 7, 101}) + 1.0f, dtype);
    INFO(nf::name(dtype));
    const double rel = dtype == nf::f16 ? 2e-3 : 1e-5;
    const nf::Expr centred = x - nf::mean(x, nf::Axes{1, 3});
    Walk walk;
    check_close(emulate({centred}, {}, {}, &walk)[0], nf::Array(centred), rel);
    CHECK(walk.per == 12);
    CHECK(walk.vec == 1);
    const nf::Array run =
        nf::Array(nf::astype(nf::randn({35, 6062}) + 1.0f, dtype))(nf::all, nf::slice(1, 6062));
    const nf::Expr run_centred = run - nf::mean(run, 1);
    check_close(emulate({run_centred}, {}, {}, &walk)[0], nf::Array(run_centred), rel);
    CHECK(walk.per == 6);
    CHECK(walk.vec == 1);
  }
}

TEST_CASE("emulated: short runs taken as lanes, a thread at one place along them",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::jit::ReduceLimits held;
  const nf::jit::ReduceLimits streamed = nf::jit::parse_reduce_limits("max_held=0,split_below=0");
  // Runs of 101 (5 a step of 512 threads, 7 idle), of 63 (4 of 256), of 10
  // over three reduced dims (the middle one found by division; 3 of 32), and
  // of 7 (1 of 8). Each kernel is compiled on the host: doubles, whose
  // streamed rows are not laned, for the first two cases only.
  struct Case {
    nf::Array x;
    nf::Axes axes;
    std::int64_t width;  // of the view of x read, along its last axis
    std::vector<nf::DType> dtypes;
  };
  const std::vector<Case> cases = {
      {nf::randn({5, 60, 7, 101}) + 1.0f, {1, 3}, 101, {nf::f16, nf::f64}},
      {nf::randn({9, 63, 4, 63}) + 1.0f, {0, 3}, 63, {nf::f16, nf::f64}},
      {nf::randn({6, 5, 7, 11}) + 1.0f, {0, 2, 3}, 10, {nf::f16}},
      {nf::randn({4, 3, 6, 7}) + 1.0f, {1, 3}, 7, {nf::f16}},
  };
  for (const Case& c : cases) {
    for (nf::DType dtype : c.dtypes) {
      for (const nf::jit::ReduceLimits* limits : {&held, &streamed}) {
        const nf::Array x =
            nf::Array(nf::astype(c.x, dtype))(nf::all, nf::all, nf::all, nf::slice(0, c.width));
        INFO(nf::to_string(x.shape())
             << " " << nf::name(dtype) << (limits == &streamed ? " streamed" : " held"));
        const double rel = dtype == nf::f16 ? 2e-3 : 1e-12;
        // Streamed rows take runs as lanes in 1- and 2-byte elements only.
        const bool laned = limits == &held || nf::itemsize(dtype) <= 2;
        Walk walk;
        const nf::Expr centred = x - nf::mean(x, c.axes);
        check_close(emulate({centred}, {}, *limits, &walk)[0], nf::Array(centred), rel);
        CHECK(walk.run_lanes == laned);
        CHECK((walk.per == 0) == (limits == &streamed));
        // Two passes, and a target read as it is written: held rows alone
        // (each kernel is compiled on the host).
        if (limits == &streamed) continue;
        const nf::Expr z = (x - nf::mean(x, c.axes)) / nf::std(x, c.axes);
        check_close(emulate({z}, {}, *limits, &walk)[0], nf::Array(z), 10 * rel);
        CHECK(walk.run_lanes);
        nf::Array in_place = x.copy();
        emulate({in_place - nf::min(in_place, c.axes)}, {in_place}, *limits, &walk);
        check_close(in_place, nf::Array(x - nf::min(x, c.axes)), rel);
        // A copy of the view of 10 is contiguous: its runs merge into one of 70.
        CHECK(walk.run_lanes == (c.x.shape()[3] == c.width));
      }
    }
  }
  // Runs of 300 leave 212 of 512 threads idle: read as before.
  const nf::Array x = nf::randn({3, 40, 2, 300});
  Walk walk;
  const nf::Expr centred = x - nf::mean(x, {1, 3});
  check_close(emulate({centred}, {}, {}, &walk)[0], nf::Array(centred), 1e-5);
  CHECK_FALSE(walk.run_lanes);
}

TEST_CASE("emulated: several statements over the same rows in one kernel",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::Array a = nf::randn({20, 64}) + 100.0f;  // a large mean and a small spread
  const auto got = emulate({nf::mean(a, 1), nf::var(a, 1)});
  check_close(got[0], nf::Array(nf::mean(a, 1)), 1e-6);
  check_close(got[1], nf::Array(nf::var(a, 1)), 1e-4);
  // Outputs over the domain and over the rows, and a producer written too.
  const auto three = emulate({softmax(a - 100.0f), nf::max(a, 1), nf::exp(a - 100.0f)});
  check_close(three[0], nf::Array(softmax(a - 100.0f)), 1e-5);
  check_close(three[1], nf::Array(nf::max(a, 1)), 1e-6);
  check_close(three[2], nf::Array(nf::exp(a - 100.0f)), 1e-6);
}

TEST_CASE("emulated: argmin and argmax take the first of equal values", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Four distinct values, so every row has ties.
  nf::Array a = nf::floor(nf::rand({20, 333}) * 4);
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    CHECK(emulate({nf::argmax(a, axis)})[0].to_vector<std::int64_t>() ==
          nf::Array(nf::argmax(a, axis)).to_vector<std::int64_t>());
    CHECK(emulate({nf::argmin(a, axis)})[0].to_vector<std::int64_t>() ==
          nf::Array(nf::argmin(a, axis)).to_vector<std::int64_t>());
  }
  CHECK(emulate({nf::argmax(a)})[0].to_vector<std::int64_t>() ==
        nf::Array(nf::argmax(a)).to_vector<std::int64_t>());
}

TEST_CASE("emulated: integer, boolean and half-precision reductions", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::Array i = nf::astype(nf::rand({9, 77}) * 200 - 100, nf::i32);
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    CHECK(emulate({nf::sum(i, axis)})[0].to_vector<std::int64_t>() ==
          nf::Array(nf::sum(i, axis)).to_vector<std::int64_t>());
    CHECK(emulate({nf::min(i, axis)})[0].to_vector<std::int32_t>() ==
          nf::Array(nf::min(i, axis)).to_vector<std::int32_t>());
    CHECK(emulate({nf::max(i, axis)})[0].to_vector<std::int32_t>() ==
          nf::Array(nf::max(i, axis)).to_vector<std::int32_t>());
  }
  nf::Array u = nf::astype(nf::rand({9, 77}) * 3, nf::u8);
  CHECK(emulate({nf::prod(u + 1, 0)})[0].to_vector<std::int64_t>() ==
        nf::Array(nf::prod(u + 1, 0)).to_vector<std::int64_t>());
  nf::Array flags = nf::rand({9, 77}) > 0.97f;
  for (int axis : {0, 1}) {
    CHECK(emulate({nf::any(flags, axis)})[0].to_vector<bool>() ==
          nf::Array(nf::any(flags, axis)).to_vector<bool>());
    CHECK(emulate({nf::all(!flags, axis)})[0].to_vector<bool>() ==
          nf::Array(nf::all(!flags, axis)).to_vector<bool>());
  }
  nf::Array h = nf::astype(nf::randn({16, 96}), nf::f16);
  check_close(emulate({nf::mean(h, 1)})[0], nf::Array(nf::mean(h, 1)), 2e-3);
  check_close(emulate({softmax(h)})[0], nf::Array(softmax(h)), 2e-3);
}

namespace {

// Rows of odd width: each row starts at another place in its first group
// (f32 in groups of 4, f16 in groups of 8, f64 in groups of 2), under the
// row walks of a block of 1024 threads holding rows of 32768 groups. Rows
// that are only reduced are shifted from two groups on; rows that write
// elements, from 32 groups' width on (f32 rows of 127 are not, of 131 are).
void check_shifted_rows(const std::vector<std::pair<nf::Array, int>>& cases) {
  const auto walks = row_walks(32, 400);
  for (const auto& [name, limits] : walks) {
    for (const auto& [x, vec] : cases) {
      INFO(nf::to_string(x.shape()) << " " << nf::name(x.dtype()) << ", " << name);
      const double tol = x.dtype() == nf::f16 ? 4e-3 : 1e-4;
      const bool long_rows = x.shape()[1] >= 32 * vec;
      // Lanes outside the row take no part: the least and the first
      // greatest are the row's own.
      Walk walk;
      nf::Array ties = nf::floor(x * 2);
      CHECK(emulate({nf::argmax(ties, 1)}, {}, limits, &walk)[0].to_vector<std::int64_t>() ==
            nf::Array(nf::argmax(ties, 1)).to_vector<std::int64_t>());
      CHECK((walk.shifted && walk.vec == vec));
      check_close(emulate({nf::min(x, 1)}, {}, limits)[0], nf::Array(nf::min(x, 1)), 0);
      check_close(emulate({nf::logsumexp(x, 1)}, {}, limits)[0], nf::Array(nf::logsumexp(x, 1)),
                  tol);
      check_close(emulate({layernorm(x)}, {}, limits, &walk)[0], nf::Array(layernorm(x)), tol);
      CHECK(walk.shifted == long_rows);
      check_close(emulate({softmax(x)}, {}, limits)[0], nf::Array(softmax(x)), tol);
      nf::Array in_place = x.copy();
      emulate({in_place - nf::mean(in_place, 1)}, {in_place}, limits);
      check_close(in_place, nf::Array(x - nf::mean(x, 1)), tol);
    }
  }
}

}  // namespace

TEST_CASE("emulated: rows of odd width in shifted vectors", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  check_shifted_rows({
      {nf::randn({6, 1003}) * 2 + 1, 4},
      {nf::randn({6, 127}) * 2 + 1, 4},
      {nf::randn({6, 131}) * 2 + 1, 4},
      {nf::astype(nf::randn({5, 203}) * 2, nf::f16), 8},
      {nf::astype(nf::randn({5, 333}) * 2, nf::f16), 8},
      {nf::randn({7, 101}, nf::f64), 2},
  });
}

// Apart from the rows above, so that ctest runs the two at once and neither
// comes near its time limit in the emulator.
TEST_CASE("emulated: long rows of odd width in shifted vectors", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  check_shifted_rows({
      {nf::randn({2, 32771}) * 2 + 1, 4},
      {nf::astype(nf::randn({2, 65541}) * 2, nf::f16), 8},
  });
  // f16 read and f32 written: groups of 4, as wide as the wider allows.
  nf::Array h = nf::astype(nf::randn({2, 32771}), nf::f16);
  const nf::Expr wider = nf::astype(h, nf::f32) * 2 - nf::max(h, 1);
  Walk walk;
  check_close(emulate({wider}, {}, {}, &walk)[0], nf::Array(wider), 4e-3);
  CHECK((walk.shifted && walk.vec == 4));
  // The columns of a view from its fourth on: read into a new array, rows
  // start at other places in a group than the output's (no vectors); in
  // place, at the same places (shifted).
  nf::Array a = nf::randn({2, 32771});
  nf::Array view = a(nf::all, nf::slice(3, 32771));
  const nf::Array before = view.copy();
  const nf::Array first_columns = nf::Array(a(nf::all, nf::slice(0, 3))).copy();
  check_close(emulate({view - nf::mean(view, 1)}, {}, {}, &walk)[0],
              nf::Array(before - nf::mean(before, 1)), 1e-4);
  CHECK((!walk.shifted && walk.vec == 1));
  emulate({view - nf::mean(view, 1)}, {view}, {}, &walk);
  CHECK((walk.shifted && walk.vec == 4));
  check_close(view, nf::Array(before - nf::mean(before, 1)), 1e-4);
  check_close(nf::Array(a(nf::all, nf::slice(0, 3))), first_columns, 0);  // untouched
}

TEST_CASE("emulated: rows on a narrower boundary in narrower vectors", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const auto walks = row_walks(nf::jit::ReduceLimits{}.max_held, 8);
  // Rows broadcast back too short to be shifted, whose width is a multiple
  // of 2 or 4 elements but not of a 16-byte vector: 76 and 100 halves start
  // on 8 bytes, 38 halves and 46 floats on 4 and 8.
  struct Case {
    nf::Array x;
    int vec;
  };
  const std::vector<Case> cases = {
      {nf::astype(nf::randn({7, 76}) * 2, nf::f16), 4},
      {nf::astype(nf::randn({3, 100}) * 2, nf::bf16), 4},
      {nf::astype(nf::randn({5, 38}) * 2, nf::f16), 2},
      {nf::randn({6, 46}) * 2 + 1, 2},
  };
  for (const auto& [name, limits] : walks) {
    for (const Case& c : cases) {
      const nf::Array& x = c.x;
      INFO(nf::to_string(x.shape()) << " " << nf::name(x.dtype()) << ", " << name);
      const double tol = x.dtype() == nf::f32 ? 1e-4 : x.dtype() == nf::f16 ? 4e-3 : 3e-2;
      Walk walk;
      check_close(emulate({layernorm(x)}, {}, limits, &walk)[0], nf::Array(layernorm(x)), tol);
      CHECK((!walk.shifted && walk.vec == c.vec));
      check_close(emulate({softmax(x)}, {}, limits)[0], nf::Array(softmax(x)), tol);
      nf::Array in_place = x.copy();
      emulate({in_place - nf::mean(in_place, 1)}, {in_place}, limits, &walk);
      CHECK(walk.vec == c.vec);
      check_close(in_place, nf::Array(x - nf::mean(x, 1)), tol);
      // Lanes past a thread's last group take no part: the first greatest
      // is the row's own.
      nf::Array ties = nf::floor(x * 2);
      CHECK(emulate({nf::argmax(ties, 1)}, {}, limits)[0].to_vector<std::int64_t>() ==
            nf::Array(nf::argmax(ties, 1)).to_vector<std::int64_t>());
    }
  }
  // Rows of a view from its third column on: they start 2 floats into a
  // vector where the output's start on one, so they are not shifted, but
  // both start on 8 bytes.
  nf::Array a = nf::randn({4, 1002});
  const nf::Array view = a(nf::all, nf::slice(2, 1002));
  const nf::Array before = view.copy();
  Walk walk;
  check_close(emulate({view - nf::mean(view, 1)}, {}, {}, &walk)[0],
              nf::Array(before - nf::mean(before, 1)), 1e-4);
  CHECK((!walk.shifted && walk.vec == 2));
  // From its second column on: one float into a vector, so an element at a time.
  const nf::Array odd = a(nf::all, nf::slice(1, 1001));
  const nf::Array odd_before = odd.copy();
  check_close(emulate({odd - nf::mean(odd, 1)}, {}, {}, &walk)[0],
              nf::Array(odd_before - nf::mean(odd_before, 1)), 1e-4);
  CHECK((!walk.shifted && walk.vec == 1));
}

TEST_CASE("emulated: an empty reduced axis gives the identities", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::Array a = nf::ones({4, 0});
  CHECK(emulate({nf::sum(a, 1)})[0].to_vector<float>() == std::vector<float>(4, 0.0f));
  CHECK(emulate({nf::prod(a, 1)})[0].to_vector<float>() == std::vector<float>(4, 1.0f));
  for (float m : emulate({nf::mean(a, 1)})[0].to_vector<float>()) CHECK(m != m);
  // Several kept dims, one of them empty: no outputs; several reduced dims
  // between kept ones, one of them empty: the identities.
  CHECK(emulate({nf::sum(nf::ones({5, 0, 13, 17}, nf::f16), 2)})[0].size() == 0);
  const nf::Array empty_between = nf::ones({3, 0, 2, 5});
  CHECK(emulate({nf::sum(empty_between, nf::Axes{1, 3})})[0].to_vector<float>() ==
        std::vector<float>(6, 0.0f));
}

TEST_CASE("emulated: the mission line in place, A = f(A)", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (const nf::Shape& shape : {nf::Shape{37, 300}, nf::Shape{2, 40000}}) {
    INFO(nf::to_string(shape));
    nf::Array a = nf::randn(shape) * 2 + 1;
    const nf::Array want(layernorm(a.copy()));
    emulate({layernorm(a)}, {a});
    check_close(a, want, 1e-4);
  }
}

TEST_CASE("emulated: rows read again for each pass, and rows split across blocks",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::jit::ReduceLimits streamed;
  streamed.max_held = 0;
  streamed.split_below = 0;
  nf::jit::ReduceLimits split;
  split.max_held = 0;
  split.chunk_groups = 400;
  nf::Array a = nf::randn({3, 2001}) * 2 + 1;  // odd: no vectors
  nf::Array b = nf::randn({4, 4000}) * 2 + 1;  // vectors of 4
  for (const auto* limits : {&streamed, &split}) {
    INFO((limits == &split ? "split" : "streamed"));
    for (const nf::Array& x : {a, b}) {
      INFO(nf::to_string(x.shape()));
      check_close(emulate({layernorm(x)}, {}, *limits)[0], nf::Array(layernorm(x)), 1e-4);
      check_close(emulate({softmax(x)}, {}, *limits)[0], nf::Array(softmax(x)), 1e-5);
      check_close(emulate({nf::logsumexp(x, 1)}, {}, *limits)[0], nf::Array(nf::logsumexp(x, 1)),
                  1e-5);
      nf::Array ties = nf::floor(x);
      CHECK(emulate({nf::argmax(ties, 1)}, {}, *limits)[0].to_vector<std::int64_t>() ==
            nf::Array(nf::argmax(ties, 1)).to_vector<std::int64_t>());
      check_close(emulate({nf::sum(x)}, {}, *limits)[0], nf::Array(nf::sum(x)), 1e-5);
    }
    nf::Array in_place = b.copy();
    emulate({layernorm(in_place)}, {in_place}, *limits);
    check_close(in_place, nf::Array(layernorm(b)), 1e-4);
  }
  // A split whose reads pass L2 (here every read does) takes the chunks of
  // every other kernel in reverse: of log_softmax's three kernels, the
  // second; of a normalisation's two, the second; rows of several tiles too.
  nf::jit::ReduceLimits reversed = split;
  reversed.l2_bytes = 1;
  for (const nf::Array& x : {a, b}) {
    INFO(nf::to_string(x.shape()));
    Walk walk;
    const nf::Expr log_softmax = x - nf::logsumexp(x);
    check_close(emulate({log_softmax}, {}, reversed, &walk)[0], nf::Array(log_softmax), 1e-5);
    CHECK(walk.reverse);
    CHECK(walk.kernels == 3);
    const nf::Expr z = (x - nf::mean(x)) / nf::std(x);
    check_close(emulate({z}, {}, reversed, &walk)[0], nf::Array(z), 1e-4);
    CHECK(walk.reverse);
    CHECK(walk.kernels == 2);
    check_close(emulate({nf::sum(x)}, {}, reversed, &walk)[0], nf::Array(nf::sum(x)), 1e-5);
    CHECK(walk.reverse);
    check_close(emulate({layernorm(x)}, {}, reversed, &walk)[0], nf::Array(layernorm(x)), 1e-4);
    CHECK(walk.reverse);  // several tiles, a row each
  }
}

TEST_CASE("emulated: long columns split across blocks", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::jit::ReduceLimits split;
  split.max_held = 0;
  split.chunk_groups = 64;
  nf::Array a = nf::rand({300, 37}) + 0.5f;
  check_close(emulate({a / nf::sum(a, 0)}, {}, split)[0], nf::Array(a / nf::sum(a, 0)), 1e-5);
  check_close(emulate({nf::var(a, 0)}, {}, split)[0], nf::Array(nf::var(a, 0)), 1e-5);
  nf::Array ties = nf::floor(a * 3);
  CHECK(emulate({nf::argmin(ties, 0)}, {}, split)[0].to_vector<std::int64_t>() ==
        nf::Array(nf::argmin(ties, 0)).to_vector<std::int64_t>());
  nf::Array in_place = a.copy();
  emulate({in_place - nf::mean(in_place, 0)}, {in_place}, split);
  check_close(in_place, nf::Array(a - nf::mean(a, 0)), 1e-5);
  // Two tiles of 32 columns a chunk, whose blocks run together, in reverse
  // in the second kernel where the reads pass L2.
  nf::jit::ReduceLimits reversed = split;
  reversed.l2_bytes = 1;
  Walk walk;
  check_close(emulate({a - nf::mean(a, 0)}, {}, reversed, &walk)[0], nf::Array(a - nf::mean(a, 0)),
              1e-5);
  CHECK(walk.reverse);
  CHECK(walk.kernels == 2);
}

TEST_CASE("emulated: columns of any width and length, with the device's limits",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  struct Case {
    nf::Shape shape;
    nf::DType dtype;
    int per;      // groups a thread holds: 0 for none
    int kernels;  // 2: split into chunks
  };
  const std::vector<Case> cases = {
      {{200, 8}, nf::f32, 7, 1},     // a warp on 4 rows of 8 outputs; 32 threads of each hold
      {{5000, 8}, nf::f32, 0, 2},    // too long to hold: chunks fill the device
      {{3, 700}, nf::f32, 3, 1},     // a thread for each column, 256 a block
      {{48, 40}, nf::f64, 6, 1},     // 8 threads a column hold
      {{256, 40}, nf::f64, 0, 2},    // 4 chunks of 64
      {{2000, 24}, nf::f16, 0, 2},   // narrow, long and half precision
      {{8, 700}, nf::bf16, 8, 1},    // 16 bytes a thread: the whole column
      {{27, 300}, nf::f16, 7, 1},    // 4 threads a column hold 7 each
      {{100, 300}, nf::f16, 13, 1},  // 8 threads a column hold 13: columns hold up to 16
      {{121, 70}, nf::f32, 16, 1},   // 8 threads of up to 16, bounds tested
  };
  for (const Case& c : cases) {
    INFO(nf::to_string(c.shape) << " " << nf::name(c.dtype));
    nf::Array x = nf::astype(nf::randn(c.shape) * 2 + 1, c.dtype);
    const double rel = c.dtype == nf::bf16 ? 3e-2 : c.dtype == nf::f16 ? 2e-3 : 1e-5;
    Walk walk;
    check_close(emulate({x - nf::mean(x, 0)}, {}, nf::test::sm90_reduce_limits(), &walk)[0],
                nf::Array(x - nf::mean(x, 0)), rel);
    CHECK(walk.per == c.per);
    CHECK(walk.kernels == c.kernels);
    check_close(emulate({nf::sum(x, 0)}, {}, nf::test::sm90_reduce_limits())[0],
                nf::Array(nf::sum(x, 0)), rel);
    check_close(emulate({nf::var(x, 0)}, {}, nf::test::sm90_reduce_limits())[0],
                nf::Array(nf::var(x, 0)), rel);
  }
}

TEST_CASE("emulated: columns of halves, two outputs a thread", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (nf::DType dtype : {nf::f16, nf::bf16}) {
    const double rel = dtype == nf::bf16 ? 3e-2 : 2e-3;
    const nf::Array wide = nf::astype(nf::randn({301, 40}) * 2 + 1, dtype);
    const nf::Array cube = nf::astype(nf::randn({7, 9, 12}) + 1, dtype);
    struct Case {
      const char* what;
      nf::Array x;
      nf::Axes axes;
      int axis;  // the one axis reduced, -1 for several (argmin takes one)
    };
    const std::vector<Case> cases = {
        {"rows from the second", wide(nf::slice(1, 301), nf::slice(0, 38)), {0}, 0},
        {"a middle axis", nf::astype(nf::randn({6, 50, 10}), dtype), {1}, 1},
        {"the leading axes", cube, {0, 1}, -1},
    };
    for (const auto& [walk_name, limits] : row_walks(8, 16)) {
      for (const Case& c : cases) {
        INFO(nf::name(dtype) << ", " << c.what << ", " << walk_name);
        Walk walk;
        check_close(emulate({nf::sum(c.x, c.axes)}, {}, limits, &walk)[0],
                    nf::Array(nf::sum(c.x, c.axes)), rel);
        CHECK(walk.pairs);
        const auto two = emulate({nf::mean(c.x, c.axes), nf::max(c.x, c.axes)}, {}, limits);
        check_close(two[0], nf::Array(nf::mean(c.x, c.axes)), rel);
        check_close(two[1], nf::Array(nf::max(c.x, c.axes)), 0);
        if (c.axis < 0) continue;
        const nf::Array ties = nf::floor(c.x * 3);
        CHECK(emulate({nf::argmin(ties, c.axis)}, {}, limits)[0].to_vector<std::int64_t>() ==
              nf::Array(nf::argmin(ties, c.axis)).to_vector<std::int64_t>());
      }
    }
    // Where the outputs' elements do not lie in pairs on 4 bytes, or a
    // value needs more than one pass, or elements are written, a thread
    // takes one output.
    const nf::Array odd_width = wide(nf::all, nf::slice(0, 37));
    const nf::Array odd_start = wide(nf::all, nf::slice(1, 39));
    const nf::Array floats = nf::randn({301, 38});
    const std::vector<std::pair<const char*, nf::Expr>> singles = {
        {"odd width", nf::sum(odd_width, 0)},
        {"odd first element", nf::sum(odd_start, 0)},
        {"floats", nf::sum(floats, 0)},
        {"var", nf::var(cube, {0, 1})},
        {"broadcast back", cube - nf::mean(cube, {0, 1})},
    };
    for (const auto& [what, e] : singles) {
      INFO(nf::name(dtype) << ", " << what);
      Walk walk;
      const nf::Array want(e);
      check_close(emulate({e}, {}, nf::test::sm90_reduce_limits(), &walk)[0], want,
                  want.dtype() == nf::f32 ? 1e-5 : rel);
      CHECK(!walk.pairs);
    }
  }
}

TEST_CASE("emulated: columns read again from shared memory", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::jit::ReduceLimits limits = nf::test::sm90_reduce_limits();
  limits.split_below = 1;  // a block or two fill the emulator
  limits.l2_bytes = 0;     // columns read from memory: blocks of half an SM
  // Columns that fit in a block's share of an SM, or are shared by a
  // cluster's blocks, each holding a part (the last a shorter one).
  nf::Array x = nf::randn({700, 45}) * 2 + 1;  // 32 outputs a block, the second tile 13 of them
  const std::vector<std::pair<nf::Array, int>> arrays = {
      {x, 1},
      {nf::randn({6000, 6}, nf::f64), 4},  // 8 outputs; 1504 elements a block, the last 1488
      {nf::randn({9001, 20}) * 2 + 1, 8},  // 16 outputs; 1136 elements a block, the last 1049
  };
  for (const auto& [a, cluster] : arrays) {
    INFO(nf::to_string(a.shape()));
    const double rel = a.dtype() == nf::f64 ? 1e-12 : 1e-5;
    const nf::Expr e = nf::exp(a - nf::max(a, 0));
    const nf::Expr softmax = e / nf::sum(e, 0);
    Walk walk;
    check_close(emulate({softmax}, {}, limits, &walk)[0], nf::Array(softmax), rel);
    CHECK(walk.shared);
    CHECK(walk.kernels == 1);
    CHECK(walk.cluster == cluster);
    const nf::Expr z = (a - nf::mean(a, 0)) / nf::sqrt(nf::var(a, 0) + 1e-5);
    const auto both = emulate({z, nf::max(a, 0)}, {}, limits);
    check_close(both[0], nf::Array(z), rel * 10);
    check_close(both[1], nf::Array(nf::max(a, 0)), rel);
    nf::Array in_place = a.copy();
    emulate({in_place - nf::mean(in_place, 0)}, {in_place}, limits, &walk);
    CHECK(walk.shared);
    check_close(in_place, nf::Array(a - nf::mean(a, 0)), rel);
  }
  // 2-byte elements: the thread of an even output copies its neighbour's
  // too, where every pair lies together on 4 bytes; where each row's pairs
  // of a block's outputs also start on 16 bytes, and one block holds them,
  // the rows are staged: copied in the 16-byte units that hold them. An odd
  // count of outputs, a view starting at an odd element, 1-byte elements,
  // or 2-byte reads beside wider ones hold each element in the 4-byte word
  // around it; where a cluster shares such columns, they are staged, each
  // row's elements of a block's outputs in the units that cover them,
  // wherever the row starts (rows of a 3-D view too, where blocks do not
  // cross its innermost kept dim), the last block's part shorter.
  nf::Array h = nf::astype(nf::randn({600, 48}) * 2 + 1, nf::f16);
  const nf::Array rows_of_88_bytes = nf::astype(nf::randn({600, 44}), nf::f16);
  const nf::Array bytes = nf::astype(nf::abs(nf::randn({500, 37})) * 40, nf::u8);
  const nf::Array tall = nf::astype(nf::randn({4001, 42}) * 2 + 1, nf::f16);
  const nf::Array cube = nf::astype(nf::randn({1500, 2, 80}) * 2 + 1, nf::bf16);
  const nf::Array tall_bytes = nf::astype(nf::abs(nf::randn({9001, 37})) * 40, nf::u8);
  enum class How { staged, pairs, words };
  struct Narrow {
    nf::Array a;
    How how;
    bool cluster;  // whether a cluster's blocks share the columns
  };
  const std::vector<Narrow> narrow = {
      {h(nf::all, nf::slice(0, 46)), How::staged, false},
      {rows_of_88_bytes(nf::all, nf::slice(0, 42)), How::pairs, false},
      {nf::astype(h(nf::all, nf::slice(0, 45)), nf::bf16), How::words, false},
      {h(nf::all, nf::slice(1, 47)), How::words, false},
      {bytes, How::words, false},
      {bytes(nf::slice(1, 500), nf::slice(2, 37)), How::words, false},
      {tall(nf::all, nf::slice(0, 41)), How::staged, true},
      {tall(nf::all, nf::slice(1, 42)), How::staged, true},
      {cube(nf::all, nf::all, nf::slice(3, 67)), How::staged, true},
      {tall_bytes, How::staged, true},
      {cube(nf::all, nf::all, nf::slice(1, 46)), How::words, true},
      {nf::astype(nf::randn({4001, 64}), nf::f16), How::pairs, true},
  };
  for (const auto& [a, how, cluster] : narrow) {
    INFO(nf::to_string(a.shape()) << " " << nf::name(a.dtype()) << " at " << a.offset());
    // bf16's ulp is 2^-7 of its value's power of two: a result near a
    // rounding boundary rounds either way from means summed in another order.
    const double rel = nf::itemsize(a.dtype()) == 1 ? 1e-5 : a.dtype() == nf::bf16 ? 8e-3 : 2e-3;
    Walk walk;
    check_close(emulate({a - nf::mean(a, 0)}, {}, limits, &walk)[0], nf::Array(a - nf::mean(a, 0)),
                rel);
    CHECK(walk.shared);
    CHECK((walk.cluster > 1) == cluster);
    CHECK(walk.staged == (how == How::staged));
    CHECK(walk.words == (how == How::words));
    check_close(emulate({nf::var(a, 0), a / nf::sum(a, 0)}, {}, limits)[1],
                nf::Array(a / nf::sum(a, 0)), rel);
  }
  Walk walk;
  const nf::Array wide = nf::randn({600, 46});
  const nf::Array pairs = h(nf::all, nf::slice(0, 46));
  check_close(emulate({pairs * wide - nf::mean(pairs * wide, 0)}, {}, limits, &walk)[0],
              nf::Array(pairs * wide - nf::mean(pairs * wide, 0)), 1e-5);
  CHECK(walk.shared);
  CHECK(walk.words);
  CHECK_FALSE(walk.staged);
  // Columns that come back from L2 take blocks of a quarter SM: 32 columns
  // of 700 floats (89.6 KB) are shared by a cluster of two.
  limits.l2_bytes = nf::test::sm90_reduce_limits().l2_bytes;
  check_close(emulate({x - nf::mean(x, 0)}, {}, limits, &walk)[0], nf::Array(x - nf::mean(x, 0)),
              1e-5);
  CHECK(walk.shared);
  CHECK(walk.cluster == 2);
  // A column reduced and not written back reads each element once anyway:
  // no copies.
  check_close(emulate({nf::sum(x, 0)}, {}, limits, &walk)[0], nf::Array(nf::sum(x, 0)), 1e-5);
  CHECK_FALSE(walk.shared);
}

TEST_CASE("emulated: long rows shared by the blocks of a cluster", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::jit::ReduceLimits clustered;
  clustered.split_below = 1;
  clustered.max_held = 3;  // a block of 1024 threads holds 3072 groups
  // Vectors of 4: 7 blocks of 768 groups, the last 392 of them. Rows of a
  // view that start elsewhere in a vector than the result's: no vectors, 8
  // blocks, the last with 625 elements.
  const std::vector<std::pair<nf::Array, int>> cases = {
      {nf::randn({3, 20000}) * 2 + 1, 7},
      {nf::Array(nf::randn({2, 6002}) * 2 + 1)(nf::all, nf::slice(1, 6002)), 8},
  };
  for (const auto& [x, blocks] : cases) {
    INFO(nf::to_string(x.shape()));
    Walk walk;
    check_close(emulate({layernorm(x)}, {}, clustered, &walk)[0], nf::Array(layernorm(x)), 1e-4);
    CHECK(walk.cluster == blocks);
    check_close(emulate({softmax(x)}, {}, clustered)[0], nf::Array(softmax(x)), 1e-5);
    check_close(emulate({nf::logsumexp(x, 1), nf::max(x, 1)}, {}, clustered)[0],
                nf::Array(nf::logsumexp(x, 1)), 1e-5);
    nf::Array ties = nf::floor(x);
    CHECK(emulate({nf::argmax(ties, 1)}, {}, clustered)[0].to_vector<std::int64_t>() ==
          nf::Array(nf::argmax(ties, 1)).to_vector<std::int64_t>());
    nf::Array in_place = x.copy();
    emulate({layernorm(in_place)}, {in_place}, clustered);
    check_close(in_place, nf::Array(layernorm(x)), 1e-4);
  }
}

TEST_CASE("emulated: blocks that loop over rows, prefetching the next into shared memory",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::jit::ReduceLimits prefetched;
  prefetched.prefetch_from = 1;
  prefetched.prefetch_max = 1 << 20;
  // 7 rows of 1000 vectors: 3 blocks take 3, 2 and 2 rows. 100 short rows,
  // 32 to a block: 4 tiles, the last with 4 rows.
  for (const nf::Shape& shape : {nf::Shape{7, 4000}, nf::Shape{100, 128}}) {
    INFO(nf::to_string(shape));
    nf::Array x = nf::randn(shape) * 2 + 1;
    Walk walk;
    check_close(emulate({softmax(x)}, {}, prefetched, &walk)[0], nf::Array(softmax(x)), 1e-5);
    CHECK(walk.prefetch);
    // With an element output, a row output and argmax beside it.
    nf::Array ties = nf::floor(x);
    const auto three =
        emulate({nf::exp(x - nf::max(x, 1)), nf::logsumexp(x, 1), nf::argmax(ties, 1)}, {},
                prefetched, &walk);
    CHECK(walk.prefetch);
    check_close(three[0], nf::Array(nf::exp(x - nf::max(x, 1))), 1e-5);
    check_close(three[1], nf::Array(nf::logsumexp(x, 1)), 1e-5);
    CHECK(three[2].to_vector<std::int64_t>() ==
          nf::Array(nf::argmax(ties, 1)).to_vector<std::int64_t>());
    nf::Array in_place = x.copy();
    emulate({softmax(in_place)}, {in_place}, prefetched);
    check_close(in_place, nf::Array(softmax(x)), 1e-5);
    // No library function on every element: the block reads directly.
    check_close(emulate({layernorm(x)}, {}, prefetched, &walk)[0], nf::Array(layernorm(x)), 1e-4);
    CHECK_FALSE(walk.prefetch);
  }
  // Copies of 16 bytes (f16 vectors of 8) and of 8 (f16 read, f32 written).
  nf::Array h = nf::astype(nf::randn({9, 800}), nf::f16);
  Walk walk;
  check_close(emulate({softmax(h)}, {}, prefetched, &walk)[0], nf::Array(softmax(h)), 2e-3);
  CHECK(walk.prefetch);
  const nf::Expr wide = nf::astype(h, nf::f32);
  check_close(emulate({softmax(wide)}, {}, prefetched, &walk)[0], nf::Array(softmax(wide)), 1e-5);
  CHECK(walk.prefetch);
  // Shared memory too small for the rows: no prefetching.
  prefetched.prefetch_max = 1024;
  emulate({softmax(h)}, {}, prefetched, &walk);
  CHECK_FALSE(walk.prefetch);
}

TEST_CASE("emulated: a value asked for twice is written to each output",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  nf::seed(20);
  nf::Array x = nf::astype(nf::randn({31, 17}) * 2, nf::f16);
  nf::Array flags = nf::rand({17, 17}) < 0.5;
  const auto outs = nf::test::emulate({x, nf::sum(flags, 0), x});
  CHECK(outs[0].to_vector<float>() == x.to_vector<float>());
  CHECK(outs[2].to_vector<float>() == x.to_vector<float>());
  CHECK(outs[1].to_vector<std::int64_t>() ==
        nf::Array(nf::sum(flags, 0)).to_vector<std::int64_t>());
}
