// What generated elementwise kernels over views compute, without a GPU: each
// kernel runs in the emulator (kernel_emulator.hpp) against the CPU backend
// on the same random data. The broadcast-vectors walk over the class of
// views a statement reads: size-1 axes anywhere and lower ranks, last dims
// that are and are not a multiple of the vector width (vectors that cross a
// row's end, the elements past the last whole vector), several views at
// once, half types and f64; and the permuted-tiles walk over transposed and
// axis-permuted views, whole and partial tiles.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"

#include "emulated_program.hpp"

namespace {

// The emulated kernel's result equals the CPU backend's: both compute each
// element with the same operations in the same order.
void check_same(const nf::Expr& e, const std::string& walk) {
  INFO(nf::kernel_source(e).substr(0, 400));
  CHECK(nf::kernel_source(e).find(walk) != std::string::npos);
  const nf::Array got = nf::test::emulate({e})[0];
  const std::vector<double> g = nf::Array(nf::astype(got, nf::f64)).to_vector<double>();
  const std::vector<double> w = nf::Array(nf::astype(nf::Array(e), nf::f64)).to_vector<double>();
  REQUIRE(g.size() == w.size());
  std::size_t bad = g.size();
  for (std::size_t i = 0; i < g.size() && bad == g.size(); ++i)
    if (g[i] != w[i]) bad = i;
  INFO("element " << bad << " of " << g.size());
  CHECK(bad == g.size());
}

}  // namespace

TEST_CASE("emulated: a view of every broadcast pattern over a rank-3 domain",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (const nf::Shape& shape : {nf::Shape{4, 3, 8}, nf::Shape{5, 3, 7}, nf::Shape{3, 5, 3}}) {
    const bool whole = shape[2] % 4 == 0;
    for (const nf::Shape& operand :
         {nf::Shape{1, shape[1], shape[2]}, nf::Shape{shape[0], 1, shape[2]},
          nf::Shape{shape[0], shape[1], 1}, nf::Shape{1, shape[1], 1}, nf::Shape{shape[2]}}) {
      INFO(nf::to_string(shape) << " + " << nf::to_string(operand));
      const nf::Array x = nf::randn(shape), c = nf::randn(operand);
      check_same(nf::relu(x + c) * 2.0f, whole ? ";collapsed;" : ";wrapping;");
    }
  }
}

TEST_CASE("emulated: rows too long for L2 taken in panels", "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // A row of x, the row operand and the output: 1,500,001 x 24 bytes, past
  // 32 MB. The last panel is partial; the other operand is a column.
  const nf::Array x = nf::randn({3, 1500002}, nf::f64), row = nf::randn({1500002}, nf::f64);
  const nf::Array col = nf::randn({3, 1}, nf::f64);
  check_same(x * row + col, ";collapsed:panels;");
  // Written into the first rows of a larger array: the last panel of the
  // last row stops at the row's end, leaving the row after untouched.
  nf::Array big = nf::zeros({4, 1500002}, nf::f64);
  nf::test::emulate({x * row + col}, {big(nf::slice(0, 3), nf::all)});
  CHECK(nf::Array(nf::all(big(nf::slice(0, 3), nf::all) == x * row + col)).item<bool>());
  CHECK(nf::Array(nf::all(big(3, nf::all) == 0.0)).item<bool>());
}

TEST_CASE("emulated: several views, a transposed one, half types and f64",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Array x = nf::randn({6, 5, 9}), row = nf::randn({1, 5, 1}), col = nf::randn({6, 1, 9});
  check_same(x * row + col, ";wrapping;");
  // An operand with the domain's elements but fewer dims is flat.
  const nf::Array one_row = nf::randn({1, 40}), flat = nf::randn({40});
  check_same(one_row + flat, "// Flat vectors:");
  const nf::Array y = nf::randn({37, 37}), b = nf::randn({37});
  check_same(y + y.T() * b, ";tiles0:");
  CHECK(nf::kernel_source(y + y.T() * b).find("loaded before the tiles") == std::string::npos);
  for (const nf::DType t : {nf::f16, nf::bf16, nf::f64}) {
    INFO(nf::name(t));
    const nf::Array h = nf::astype(nf::randn({7, 24}), t), r = nf::astype(nf::randn({24}), t);
    const nf::Array odd = nf::astype(nf::randn({7, 13}), t), s = nf::astype(nf::randn({13}), t);
    check_same(h - r, ";collapsed;");
    check_same(odd * s, ";wrapping;");
  }
}

TEST_CASE("emulated: transposed and permuted views through shared-memory tiles",
          "[emulated][cpu-backend]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Whole tiles, partial ones on both edges, tiles of 8 along a short
  // permuted dim; a dim shorter than a sector (5) or a last dim shorter than
  // a warp (20) reads the view an element at a time.
  for (const nf::Shape& shape : {nf::Shape{64, 96}, nf::Shape{70, 45}, nf::Shape{8, 40},
                                 nf::Shape{12, 70}, nf::Shape{5, 9}, nf::Shape{40, 20}}) {
    INFO(nf::to_string(shape));
    const nf::Array a = nf::randn({shape[1], shape[0]}), x = nf::randn(shape);
    const nf::Array bias = nf::randn({shape[1]});
    const bool tiles = shape[0] >= 8 && shape[1] >= 32;
    check_same(nf::relu(a.T() + x) * bias, tiles ? ";tiles0:" : ";rank2;");
  }
  // Axes (2, 0, 1) of a (9, 40, 33) array read over (33, 9, 40): contiguous
  // along dim 0 of the domain; (0, 2, 1) of (4, 40, 36): along dim 1;
  // (2, 1, 0) of (40, 6, 31): along dim 0, the middle dim outside the tile.
  const nf::Array p = nf::randn({9, 40, 33}), q = nf::randn({33, 9, 40});
  check_same(nf::transpose(p, {2, 0, 1}) - q, ";tiles0:");
  const nf::Array r = nf::randn({4, 40, 36}), t = nf::randn({4, 36, 40});
  check_same(nf::transpose(r, {0, 2, 1}) * t, ";tiles1:");
  const nf::Array v = nf::randn({40, 6, 31}), z = nf::randn({31, 6, 40});
  check_same(nf::transpose(v, {2, 1, 0}) + z, ";tiles0:");
  // 2-byte elements take tiles where the output steps 512 elements or more
  // along the permuted dim, as (33, 600) does.
  for (const nf::DType dt : {nf::f16, nf::bf16, nf::f64}) {
    INFO(nf::name(dt));
    const nf::Array h = nf::astype(nf::randn({600, 33}), dt),
                    g = nf::astype(nf::randn({33, 600}), dt);
    check_same(h.T() + g, ";tiles0:");
    const nf::Array w = nf::astype(nf::randn({600, 8}), dt), e = nf::astype(nf::randn({600}), dt);
    check_same(w.T() * e, ";tiles0:8x");
    const nf::Array near = nf::astype(nf::randn({40, 33}), dt);
    const nf::Array o = nf::astype(nf::randn({33, 40}), dt);
    check_same(near.T() - o, dt == nf::f64 ? ";tiles0:" : ";rank2;");
  }
  // A permuted dim whose rows lie apart, which tiles of a power of 2 would
  // cut in three pieces or more, is taken whole, its rows read through by
  // the block's threads: pairs (36), elements (35), and f32 (20, a tile of
  // 24). Rows that follow one another keep the power of 2.
  for (const nf::DType dt : {nf::f16, nf::bf16}) {
    INFO(nf::name(dt));
    for (const std::int64_t n : {36, 35}) {
      const nf::Array x = nf::astype(nf::randn({40, 20, n}), dt);
      const nf::Array y = nf::astype(nf::randn({n, 20, 40}), dt);
      check_same(nf::transpose(x, {2, 1, 0}) * y, n == 36 ? ";tiles0:40x64:pairs;" : ";tiles0:40x");
      CHECK(nf::kernel_source(nf::transpose(x, {2, 1, 0}) * y)
                .find("A tile spans all " + std::to_string(n) + " elements") != std::string::npos);
    }
  }
  const nf::Array x20 = nf::randn({50, 6, 20}), y20 = nf::randn({20, 6, 50});
  check_same(nf::transpose(x20, {2, 1, 0}) - y20, ";tiles0:24x32;");
  const nf::Array z20 = nf::randn({50, 20}), w20 = nf::randn({20, 50});
  check_same(z20.T() - w20, ";tiles0:8x");
  // A tile longer along the permuted dim than along the last.
  const nf::Array n = nf::astype(nf::randn({70, 8, 1000}), nf::f16);
  const nf::Array m = nf::astype(nf::randn({1000, 8, 70}), nf::f16);
  check_same(nf::transpose(n, {2, 1, 0}) - m, ";tiles0:64x32:pairs;");
  // Pairs of 2-byte elements where every pair starts on 4 bytes: even dims,
  // offsets and strides; an odd offset or dim takes elements one at a time.
  for (const nf::DType dt : {nf::f16, nf::bf16}) {
    INFO(nf::name(dt));
    const nf::Array h = nf::astype(nf::randn({600, 36}), dt);
    const nf::Array g = nf::astype(nf::randn({34, 600}), dt);
    const nf::Array c = nf::astype(nf::randn({600}), dt);
    const nf::Array even = h(nf::all, nf::slice(0, 34)), odd = h(nf::all, nf::slice(1, 35));
    check_same(even.T() * g + c, ":pairs;");
    check_same(odd.T() * g + c, ";tiles0:");
    CHECK(nf::kernel_source(odd.T() * g + c).find(":pairs;") == std::string::npos);
    // A tile holds a pair a thread each trip: 16 x 32 over (8, 20, 32), not
    // 8 x 32, whose phase 1 in pairs ran no trip.
    const nf::Array small = nf::astype(nf::randn({32, 20, 8}), dt);
    const nf::Array y = nf::astype(nf::randn({8, 20, 32}), dt);
    check_same(nf::transpose(small, {2, 1, 0}) + y, ";tiles0:16x32:pairs;");
    // Taken an element at a time, the flat arrays are loaded before the
    // tiles are read: two of them, tiles partial along both dims.
    const nf::Array v = nf::astype(nf::randn({601, 35}), dt);
    const nf::Array f = nf::astype(nf::randn({35, 601}), dt),
                    e = nf::astype(nf::randn({35, 601}), dt);
    check_same(v.T() * f - e, "loaded before the tiles are read");
    check_same(nf::transpose(nf::astype(nf::randn({601, 33}), dt)) - 1.0f, ";tiles0:");
  }
}
