// Reduction kernels, checked without a GPU: what the planner puts in one
// kernel, that the source is one readable kernel, and that NVRTC compiles
// every reduction for every dtype and walk.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <nvrtc.h>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "statements.hpp"

#include "codegen/reduce_spec.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/config.hpp"
#include "plan/memory_layout.hpp"
#include "runtime/nf_reduce.h"

using nf::test::count;
using nf::test::filled;
using nf::test::layernorm;
using nf::test::softmax;

TEST_CASE("the mission line is one kernel that reads A once and writes once", "[host][codegen]") {
  nf::Array a = nf::ones({128, 784});
  const nf::Plan p = nf::plan({layernorm(a)});
  CHECK(p.kernel_count() == 1);
  REQUIRE(p.sources().size() == 1);
  const std::string src = p.sources()[0];
  CHECK(count(src, "__global__") == 1);
  CHECK(count(src, "__restrict__ in") == 1);
  CHECK(count(src, "__restrict__ out") == 1);
  // mean and var share the pass that sums the row.
  const std::string kernel = src.substr(src.find("// numfuse reduction kernel"));
  CHECK(count(kernel, "nf_row_allreduce") == 2);
  CHECK(nf::kernel_source(layernorm(a)) == src);
  CHECK(p.to_string().find("moves " + std::to_string(2 * 128 * 784 * 4) + " bytes") !=
        std::string::npos);
}

TEST_CASE("softmax, logsumexp and reduce-then-broadcast are one kernel each", "[host][codegen]") {
  nf::Array a = nf::ones({64, 100});
  CHECK(nf::plan({softmax(a)}).kernel_count() == 1);
  CHECK(nf::plan({nf::logsumexp(a, 1)}).kernel_count() == 1);
  CHECK(nf::plan({a - nf::max(a, 1)}).kernel_count() == 1);
  CHECK(nf::plan({a / nf::sum(a, 0)}).kernel_count() == 1);
  CHECK(nf::plan({nf::sum(a)}).kernel_count() == 1);
  // Two statements over the same rows: one pass.
  CHECK(nf::plan({nf::mean(a, 1), nf::var(a, 1)}).kernel_count() == 1);
  CHECK(nf::plan({layernorm(a), nf::mean(a, 1)}).kernel_count() == 1);
}

TEST_CASE("reductions of different axes, or of a reduced value, take separate kernels",
          "[host][codegen]") {
  nf::Array a = nf::ones({64, 100});
  CHECK(nf::plan({nf::sum(a, 1) + nf::sum(a, 0)}).kernel_count() == 2);
  CHECK(nf::plan({nf::sum(nf::sum(a, 1), 0)}).kernel_count() == 2);
  // A generator indexes itself by its own shape: it fills memory first.
  CHECK(nf::plan({nf::sum(nf::rand({64, 100}), 1)}).kernel_count() == 2);
  setenv("NF_FUSION", "off", 1);
  const int separate = nf::plan({layernorm(a)}).kernel_count();
  unsetenv("NF_FUSION");
  CHECK(separate == 7);  // var, +, sqrt, reciprocal, mean, -, *
}

TEST_CASE("reduction kernels walk rows with vectors and columns by outputs", "[host][codegen]") {
  nf::Array a = nf::ones({64, 128});
  const std::string rows = nf::kernel_source(nf::sum(a, 1));
  CHECK(rows.find(";rows;") != std::string::npos);
  CHECK(rows.find("nf_vec<nf_f32, 4>") != std::string::npos);
  const std::string columns = nf::kernel_source(nf::sum(a, 0));
  CHECK(columns.find(";columns;") != std::string::npos);
  CHECK(columns.find("nf_column_allreduce") != std::string::npos);
  // The transposed view reduced along its rows is walked by columns.
  CHECK(nf::kernel_source(nf::sum(a.T(), 1)).find(";columns;") != std::string::npos);
  // Rows too long to hold, on a device without clusters, are read again for
  // each pass.
  nf::set_target_arch("sm_80");
  const std::string streamed = nf::kernel_source(layernorm(nf::ones({512, 1 << 16})));
  nf::set_target_arch("sm_90");
  CHECK(streamed.find("per0") != std::string::npos);
  CHECK(streamed.find("v_in0") == std::string::npos);
}

TEST_CASE("reduction kernels find coordinates without a division instruction", "[host][codegen]") {
  // Several reduced dims between kept ones, broadcast back: each element's
  // coordinates, and each output's, by multiply-high and shift
  // (nf_coordinate).
  const nf::Array x = nf::ones({6, 7, 9, 11}, nf::f16);
  const std::string full = nf::kernel_source(x - nf::mean(x, nf::Axes{1, 3}));
  const std::string src = full.substr(full.find("// numfuse reduction kernel"));
  CHECK(src.find("red2;") != std::string::npos);
  CHECK(src.find("const nf_walk_dims<nf_idx, 2> red") != std::string::npos);
  CHECK(src.find("const nf_walk_dims<nf_idx, 2> kept") != std::string::npos);
  CHECK(src.find("nf_coordinate(red, 1, q)") != std::string::npos);
  CHECK(src.find("nf_coordinate(kept, 1, rest)") != std::string::npos);
  for (const char* division : {"% red", "/= red", "% kept", "/= kept"}) {
    CHECK(src.find(division) == std::string::npos);
  }
}

TEST_CASE("rows over several reduced dims say how they are read", "[host][codegen]") {
  // Runs of 3 halves: an element at a time, 16 a thread; of 5: as lanes, 3
  // runs a step of 16 threads; of 11: the vectors of 8 that cover them; of
  // 16: vectors of 8.
  const std::string scalars =
      nf::kernel_source(nf::sum(nf::ones({6, 7, 9, 3}, nf::f16), nf::Axes{1, 3}));
  CHECK(scalars.find("// Rows lie over 2 reduced dims, read an element at a time") !=
        std::string::npos);
  CHECK(scalars.find("a thread aims for 16 in flight.") != std::string::npos);
  CHECK(scalars.find("lane_d") == std::string::npos);
  const std::string lanes =
      nf::kernel_source(nf::sum(nf::ones({6, 7, 9, 5}, nf::f16), nf::Axes{1, 3}));
  CHECK(lanes.find("so a thread keeps one place along\n// them (lane_d)") != std::string::npos);
  CHECK(lanes.find("const nf_idx r = rq * red.d[1] + lane_d;") != std::string::npos);
  CHECK(lanes.find("nf_coordinate(red, 1, q)") == std::string::npos);
  const std::string covered =
      nf::kernel_source(nf::sum(nf::ones({6, 7, 9, 11}, nf::f16), nf::Axes{1, 3}));
  CHECK(covered.find("so each run is read as the aligned vectors of 8 elements that") !=
        std::string::npos);
  const std::string vectors =
      nf::kernel_source(nf::sum(nf::ones({6, 7, 9, 16}, nf::f16), nf::Axes{1, 3}));
  CHECK(vectors.find("so the rows are read in vectors of 8 elements.") != std::string::npos);
  // One run: nothing to say.
  const std::string run =
      nf::kernel_source(nf::sum(nf::ones({6, 7, 9, 11}, nf::f16), nf::Axes{2, 3}));
  CHECK(run.find("// Rows lie over") == std::string::npos);
}

TEST_CASE("rows on a narrower boundary say so", "[host][codegen]") {
  // Rows of 76 halves broadcast back start on 8 bytes: vectors of 4; of 80
  // on 16 bytes: vectors of 8, nothing to say; reduced alone, rows of 76 are
  // shifted vectors of 8.
  const nf::Array x = nf::ones({9, 76}, nf::f16);
  const std::string narrow = nf::kernel_source(x - nf::mean(x, 1));
  CHECK(narrow.find("vec4;") != std::string::npos);
  CHECK(narrow.find("// Rows start on a boundary of 4 elements (8 bytes) but not on a 16-byte") !=
        std::string::npos);
  const nf::Array y = nf::ones({9, 80}, nf::f16);
  CHECK(nf::kernel_source(y - nf::mean(y, 1)).find("// Rows start on a boundary") ==
        std::string::npos);
  const std::string shifted = nf::kernel_source(nf::sum(x, 1));
  CHECK(shifted.find("vec8;") != std::string::npos);
  CHECK(shifted.find("// Rows start on a boundary") == std::string::npos);
}

TEST_CASE("rows in narrower vectors take about 16 bytes a thread", "[host][codegen]") {
  // Rows of 52 halves: 13 vectors of 8 bytes, two a thread, so 8 threads a
  // row; of 14 bfloat16s: 7 vectors of 4 bytes, four a thread, 2 threads.
  const nf::Array x = nf::ones({9, 52}, nf::f16);
  const std::string halves = nf::kernel_source(x - nf::mean(x, 1));
  CHECK(halves.find(";tr8;to32;per2;vec4;") != std::string::npos);
  const nf::Array y = nf::ones({9, 14}, nf::bf16);
  const std::string pairs = nf::kernel_source(y - nf::mean(y, 1));
  CHECK(pairs.find(";tr2;to128;per4;vec2;") != std::string::npos);
}

TEST_CASE("columns of narrow elements take about 16 bytes a thread", "[host][codegen]") {
  // Columns of 8 bfloat16s: a thread each, all 8 held; of 27: 4 threads of 7.
  // Floats stay at 4 a thread, bytes at 8 (all a held walk keeps). Halves
  // of even width go in pairs, a thread's word of two as a float.
  const auto signature = [](const nf::Expr& e) {
    const std::string src = nf::kernel_source(e);
    return src.substr(src.find("signature: "), 96);
  };
  CHECK_THAT(signature(nf::sum(nf::ones({8, 4095}, nf::bf16), 0)),
             Catch::Contains(";columns;tr1;to256;per8;"));
  CHECK_THAT(signature(nf::sum(nf::ones({27, 4095}, nf::f16), 0)),
             Catch::Contains(";columns;tr4;to64;per7;"));
  CHECK_THAT(signature(nf::sum(nf::ones({8, 4096}), 0)),
             Catch::Contains(";columns;tr2;to128;per4;"));
  CHECK_THAT(signature(nf::sum(nf::ones({8, 4096}, nf::bf16), 0)),
             Catch::Contains(";columns;tr2;to128;per4;vec1;kept1;red1;pairs;"));
  CHECK_THAT(signature(nf::sum(nf::ones({30, 4096}, nf::u8), 0)),
             Catch::Contains(";columns;tr4;to64;per8;"));
  // Columns longer than a block's 8 threads of 8 hold up to 16 a thread:
  // floats, halves broadcast back and halves in pairs; halves summed one
  // output a thread and doubles, 8.
  const nf::Array halves = nf::ones({75, 4096}, nf::f16);
  CHECK_THAT(signature(halves - nf::mean(halves, 0)), Catch::Contains(";columns;tr8;to32;per10;"));
  CHECK_THAT(signature(nf::sum(halves, 0)), Catch::Contains(";columns;tr8;to32;per10;"));
  CHECK_THAT(signature(nf::sum(nf::ones({75, 4095}, nf::f16), 0)),
             Catch::Contains(";columns;tr8;to32;per0;"));
  CHECK_THAT(signature(nf::sum(nf::ones({128, 4096}), 0)),
             Catch::Contains(";columns;tr8;to32;per16;"));
  CHECK_THAT(signature(nf::sum(nf::ones({75, 4096}, nf::f64), 0)),
             Catch::Contains(";columns;tr8;to32;per0;"));
}

TEST_CASE("outputs of too many elements, too few to fill a device, are split", "[host][codegen]") {
  // One kernel per pass, then one for the stores. var takes one pass where
  // the elements are not held (its deviations from each row's first element).
  CHECK(nf::plan({layernorm(nf::ones({1, 1 << 24}))}).kernel_count() == 2);
  CHECK(nf::plan({nf::var(nf::ones({4096, 4096}))}).kernel_count() == 2);
  CHECK(nf::plan({softmax(nf::ones({2, 1 << 20}))}).kernel_count() == 3);
  CHECK(nf::plan({nf::sum(nf::ones({4096, 4096}))}).kernel_count() == 2);
  CHECK(nf::plan({nf::argmax(nf::ones({1 << 22}))}).kernel_count() == 2);
  CHECK(nf::plan({nf::sum(nf::ones({32768, 1024}), 0)}).kernel_count() == 2);
  // Held rows and many long rows stay one kernel.
  CHECK(nf::plan({layernorm(nf::ones({1024, 32768}))}).kernel_count() == 1);
  CHECK(nf::plan({layernorm(nf::ones({512, 1 << 16}))}).kernel_count() == 1);
}

TEST_CASE("var deviates from the mean of rows a block holds, else from their first elements",
          "[host][codegen]") {
  // Held rows: a second pass over registers, about the first pass's mean.
  const std::string held = nf::kernel_source(nf::var(nf::ones({64, 4096}), 1));
  CHECK(count(held, "__global__") == 1);
  CHECK(held.find("p1 = nf_moments_term::accumulate(p1, a0, r, m0);") != std::string::npos);
  CHECK(held.find("f_a0") == std::string::npos);
  // Split rows and all elements: one pass about each output's first element,
  // whose partial results meet by addition.
  for (const nf::Expr& e : {nf::var(nf::ones({4096, 4096})), nf::std(nf::ones({2, 1 << 22}), 1)}) {
    const std::vector<std::string> sources = nf::plan({e}).sources();
    REQUIRE(sources.size() == 2);
    CHECK(sources[0].find("f_a0 = nf_add(f_a0, a0);") != std::string::npos);
    CHECK(sources[0].find("p1 = nf_moments_term::accumulate(p1, a0, r, f_a0);") !=
          std::string::npos);
    CHECK(sources[1].find("nf_moments_term::accumulate") == std::string::npos);
  }
  // Rows of a block of 1024 threads: one pass, the sum and moments one pair.
  const std::string wide_block = nf::kernel_source(nf::var(nf::ones({64, 32768}), 1));
  CHECK(wide_block.find("__cluster_dims__") == std::string::npos);
  CHECK(count(wide_block, "nf_row_allreduce<1024>(q0, nf_pair_op<") == 1);
  // Rows a cluster holds: one pass too, whose sum and moments meet as a pair,
  // one meeting of the cluster where two passes would take two.
  const std::string cluster = nf::kernel_source(nf::var(nf::ones({128, 65536}), 1));
  CHECK(cluster.find("__cluster_dims__(8, 1, 1)") != std::string::npos);
  CHECK(cluster.find("p1 = nf_moments_term::accumulate(p1, a0, r, f_a0);") != std::string::npos);
  CHECK(count(cluster, "nf_pair<nf_sum_term::acc<nf_f32>, nf_moments_term::acc<nf_f32>>") == 1);
  CHECK(count(cluster, "nf_row_allreduce<") == 1);
  CHECK(count(cluster, "nf_cluster_allreduce<8>(q0, nf_pair_op<nf_sum_term, nf_moments_term>()") ==
        1);
  // f64 accumulators are too wide to pair in a slot: a meeting each.
  const std::string wide = nf::kernel_source(nf::var(nf::ones({128, 65536}, nf::f64), 1));
  CHECK(wide.find("f_a0") != std::string::npos);
  CHECK(count(wide, "nf_pair_op<") == 0);
}

TEST_CASE("products of floating values accumulate in f64", "[host][codegen]") {
  // The monoid kernels and the CPU backend both accumulate products in.
  CHECK(std::is_same_v<nf_prod_term::acc<nf_f32>, nf_f64>);
  CHECK(std::is_same_v<nf_prod_term::acc<nf_f64>, nf_f64>);
  // Integers multiply exactly (with wraparound) in their own type.
  CHECK(std::is_same_v<nf_prod_term::acc<nf_i64>, nf_i64>);
  for (const nf::DType t : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
    INFO(nf::name(t));
    const nf::Array a = nf::ones({64, 4096}, t);
    const std::string src = nf::kernel_source(nf::prod(a, 1));
    const std::string c = t == nf::f64 ? "nf_f64" : "nf_f32";
    CHECK(src.find("nf_prod_term::acc<" + c + "> p0 = nf_prod_term::identity<" + c + ">();") !=
          std::string::npos);
    CHECK(src.find("p0 = nf_prod_term::accumulate(p0, ") != std::string::npos);
  }
  CHECK(nf::kernel_source(nf::prod(nf::ones({64, 4096}, nf::i32), 1))
            .find("nf_prod_term::acc<nf_i64> p0") != std::string::npos);
}

TEST_CASE("reduction source is canonical: scalars and data are parameters", "[host][codegen]") {
  nf::Array a = nf::ones({32, 48}), b = nf::zeros({32, 48});
  CHECK(nf::kernel_source(nf::var(a, 1) + 1e-5f) == nf::kernel_source(nf::var(b, 1) + 0.5f));
  CHECK(nf::kernel_source(nf::var(a, 1)) != nf::kernel_source(nf::var(a, 1, 1)));
  CHECK(nf::kernel_source(nf::sum(a, 1)) != nf::kernel_source(nf::sum(a, 0)));
}

TEST_CASE("rows too long for a block are shared by a cluster where the device has them",
          "[host][codegen]") {
  nf::Array a = nf::ones({128, 65536});
  const std::string src = nf::kernel_source(layernorm(a));
  CHECK(count(src, "__global__") == 1);
  CHECK(src.find("__cluster_dims__(8, 1, 1)") != std::string::npos);
  CHECK(count(src, "nf_cluster_allreduce<8>") == 1);  // one pass, its terms a pair
  // Values a later pass needs again stay in registers: softmax's exp once,
  // and its division takes one reciprocal per row.
  const std::string source = nf::kernel_source(softmax(a));
  const std::string soft = source.substr(source.find("// numfuse reduction kernel"));
  CHECK(count(soft, "nf_exp(") == 1);
  CHECK(count(soft, "nf_divide_by(") == 1);
  CHECK(count(soft, "nf_divisor_of<") == 1);
  nf::set_target_arch("sm_80");
  const std::string sm80 = nf::kernel_source(layernorm(a));
  nf::set_target_arch("sm_90");
  CHECK(sm80.find("__cluster_dims__") == std::string::npos);
  CHECK(nf::plan({layernorm(a)}).kernel_count() == 1);
}

TEST_CASE("rows that take a block's registers are prefetched where the device can",
          "[host][codegen]") {
  nf::Array a = nf::ones({1024, 32768});
  const std::string src = nf::kernel_source(softmax(a));
  CHECK(count(src, "__global__") == 1);
  CHECK(src.find("NF_DYNAMIC_SHARED(nf_next)") != std::string::npos);
  CHECK(count(src, "nf_fetch<16>(") == 2);  // the first tile, then each next one
  CHECK(src.find("tile += gridDim.x") != std::string::npos);
  CHECK(nf::plan({softmax(a)}).kernel_count() == 1);
  // A thread refills only its own slots, so the next tile comes in without a
  // barrier, unless a tile's odd number of combinations would leave the next
  // tile's first in the buffer of this tile's last.
  const auto kernel = [](const std::string& s) { return s.substr(s.find("// numfuse reduction")); };
  CHECK(count(kernel(src), "__syncthreads()") == 0);
  const std::string odd = nf::kernel_source(nf::exp(a - nf::max(a, 1)));
  CHECK(count(odd, "nf_fetch<16>(") == 2);
  CHECK(count(kernel(odd), "__syncthreads()") == 1);
  // Without library functions on every element the block waits little.
  CHECK(nf::kernel_source(layernorm(a)).find("nf_fetch<") == std::string::npos);
  // Shorter rows leave room for several blocks on an SM: read directly.
  nf::Array b = nf::ones({8192, 8192});
  CHECK(nf::kernel_source(softmax(b)).find("nf_fetch<") == std::string::npos);
  nf::set_target_arch("sm_75");  // no cp.async
  CHECK(nf::kernel_source(softmax(a)).find("nf_fetch<") == std::string::npos);
  nf::set_target_arch("sm_86");  // 99 KiB of shared memory a block: too little
  CHECK(nf::kernel_source(softmax(a)).find("nf_fetch<") == std::string::npos);
  nf::set_target_arch("sm_90");
}

// Every reduction, for every dtype, in each way a kernel can walk its
// domain: rows held in registers, rows read again per pass, rows shared by
// a cluster, columns, several reduced dims, and everything to one value. The
// reductions of one walk and dtype share a kernel, so the table takes a few
// compiles.
TEST_CASE("every reduction x dtype x walk compiles with NVRTC", "[host][codegen][nvrtc]") {
  struct Walk {
    const char* name;
    nf::Shape shape;
    nf::Axes axes;
    int kernels;  // at most
  };
  for (nf::DType t : nf::all_dtypes) {
    // 16384 vectors of 16 bytes a row: a cluster of 8 blocks; 8192: one
    // block, prefetching.
    const std::int64_t cluster_row = 16384 * 16 / std::int64_t(nf::itemsize(t));
    // Reductions of integers accumulate in another dtype than mean's; a
    // split row takes a kernel per pass.
    const std::vector<Walk> walks = {
        {"rows", {33, 100}, nf::Axes(1), 2},
        {"long rows", {2, 20000}, nf::Axes(1), 6},
        {"cluster rows", {16, cluster_row}, nf::Axes(1), 2},
        {"prefetched rows", {4, cluster_row / 2}, nf::Axes(1), 2},
        {"columns", {100, 33}, nf::Axes(0), 2},
        {"general", {7, 13, 5}, nf::Axes({0, 2}), 2},
        {"all", {9, 11}, nf::Axes(), 2},
        {"split rows", {2, 300001}, nf::Axes(1), 6},
        {"shared columns", {300, 4200}, nf::Axes(0), 6},
        {"cluster columns", {4000, 2100}, nf::Axes(0), 6},
    };
    for (const Walk& w : walks) {
      nf::Array x = filled(w.shape, t);
      const std::vector<nf::Expr> roots = {
          nf::sum(x, w.axes), nf::prod(x, w.axes),      nf::mean(x, w.axes), nf::var(x, w.axes),
          nf::std(x, w.axes), nf::min(x, w.axes),       nf::max(x, w.axes),  nf::any(x, w.axes),
          nf::all(x, w.axes), nf::logsumexp(x, w.axes),
      };
      std::vector<nf::Expr> with_args = roots;
      // Prefetching needs a library function on every element: softmax's
      // exp, of floating rows (others write wider elements than they read).
      const bool prefetched = std::string(w.name) == "prefetched rows" && nf::is_floating(t);
      if (prefetched) with_args.push_back(softmax(x));
      // Columns broadcast back are held in shared memory, elements of 1 and
      // 2 bytes in pairs or in words; 1-byte elements held in words take
      // four times their bytes, too many for columns of 4000 (split).
      const bool columns =
          std::string(w.name) == "shared columns" || std::string(w.name) == "cluster columns";
      const bool shared =
          columns && (std::string(w.name) == "shared columns" || nf::itemsize(t) >= 2);
      if (columns) with_args.push_back(x - nf::mean(x, w.axes));
      if (w.axes.is_all()) {
        with_args.push_back(nf::argmin(x));
        with_args.push_back(nf::argmax(x));
      } else if (w.axes.list().size() == 1) {
        with_args.push_back(nf::argmin(x, w.axes.list()[0]));
        with_args.push_back(nf::argmax(x, w.axes.list()[0]));
      }
      const nf::Plan p = nf::plan(with_args);
      INFO(nf::name(t) << ", " << w.name << ": " << p.to_string());
      CHECK(p.kernel_count() <= w.kernels);
      bool copies = false;
      for (const std::string& src : p.sources()) {
        if (std::string(w.name) == "cluster rows") CHECK(count(src, "__cluster_dims__(8, 1, 1)"));
        // Columns of 4000 elements: the blocks of a cluster hold them.
        if (std::string(w.name) == "cluster columns" && shared && count(src, "nf_fetch<")) {
          CHECK(count(src, "__cluster_dims__("));
        }
        if (prefetched) CHECK(count(src, "nf_fetch<"));
        copies = copies || count(src, "nf_fetch<");
        const nf::jit::KernelImage image = nf::jit::compile(src, "sm_90");
        CHECK(image.cubin);
      }
      if (shared) CHECK(copies);
    }
  }
  nf::Array h = filled({33, 100}, nf::f16);
  const nf::jit::KernelImage sm80 = nf::jit::compile(nf::kernel_source(softmax(h)), "sm_80");
  CHECK(sm80.cubin);
  // Prefetching for sm_80 (rows of 64 KiB a block): copies of 16 bytes (f32
  // read) and of 8 (f16 read, f32 written).
  nf::set_target_arch("sm_80");
  nf::Array f = filled({4, 16384}, nf::f32);
  nf::Array g = filled({4, 32768}, nf::f16);
  for (const nf::Expr& e : {softmax(f), softmax(nf::astype(g, nf::f32))}) {
    const std::string src = nf::kernel_source(e);
    CHECK(count(src, "nf_fetch<"));
    CHECK(nf::jit::compile(src, "sm_80").cubin);
  }
  nf::set_target_arch("sm_90");
}

TEST_CASE("NF_REDUCE_LIMITS settings parse, and bad ones are named", "[host][codegen]") {
  const nf::jit::ReduceLimits l = nf::jit::parse_reduce_limits("max_held=0,chunk_groups=64");
  CHECK(l.max_held == 0);
  CHECK(l.chunk_groups == 64);
  CHECK(l.split_below == nf::jit::ReduceLimits{}.split_below);
  CHECK(nf::jit::parse_reduce_limits("max_cluster=1").max_cluster == 1);
  CHECK(nf::jit::parse_reduce_limits("prefetch_from=0").prefetch_from == 0);
  CHECK(nf::jit::parse_reduce_limits("max_gathered=64").max_gathered == 64);
  for (const std::string_view name : nf::config::kReduceLimitNames) {
    INFO(name);
    CHECK_NOTHROW(nf::jit::parse_reduce_limits(std::string(name) + "=1"));
  }
  CHECK(nf::jit::reduce_limits_for("sm_80").max_cluster == 1);
  CHECK(nf::jit::reduce_limits_for("sm_90").max_cluster == 8);
  for (const char* bad : {"max_held", "max_held=-1", "chunk_groups=0", "held=3", "max_held=2x",
                          "max_cluster=9", "max_cluster=0", "max_gathered=0"}) {
    INFO(bad);
    try {
      nf::jit::parse_reduce_limits(bad);
      FAIL("accepted");
    } catch (const nf::ValueError& e) {
      CHECK(std::string(e.what()).find(std::string(bad).substr(0, 8)) != std::string::npos);
    }
  }
}

namespace {

// What ptxas reports of the one kernel in `source` compiled as numfuse
// compiles it for `arch`, asked to say (ptxas -v): registers a thread and
// the bytes it spills to local memory and loads back.
struct Resources {
  int registers = -1;
  int spill_stores = -1;
  int spill_loads = -1;
};

// The number before `label` in ptxas's report ("0 bytes spill stores"), or -1.
int number_before(const std::string& log, const std::string& label) {
  const std::size_t at = log.find(label);
  const std::size_t begin = at == std::string::npos ? at : log.find_last_of(" \t", at - 1);
  if (begin == std::string::npos) return -1;
  return std::atoi(log.c_str() + begin + 1);
}

Resources ptxas_report(const std::string& source, const std::string& arch) {
  std::vector<std::string> options = nf::jit::compile_options(arch);
  options.push_back("--ptxas-options=-v");
  std::vector<const char*> pointers;
  for (const std::string& o : options) pointers.push_back(o.c_str());
  nvrtcProgram program = nullptr;
  REQUIRE(nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", 0, nullptr, nullptr) ==
          NVRTC_SUCCESS);
  const nvrtcResult compiled = nvrtcCompileProgram(program, int(pointers.size()), pointers.data());
  std::size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  nvrtcDestroyProgram(&program);
  INFO(log);
  REQUIRE(compiled == NVRTC_SUCCESS);
  const Resources r{number_before(log, " registers"), number_before(log, " bytes spill stores"),
                    number_before(log, " bytes spill loads")};
  REQUIRE((r.registers > 0 && r.spill_stores >= 0 && r.spill_loads >= 0));
  return r;
}

}  // namespace

TEST_CASE("reduction kernels that hold elements in registers spill none of them",
          "[host][codegen]") {
  // The sweep's launches that hold the most a thread (ptxas -v on sm_90):
  // clusters of 8 holding 7 vectors a thread, covered runs, rows held by
  // blocks of 1024, columns. The bf16 clusters spilled 52-64 bytes while
  // bf16 was converted by a shift (bench/RESULTS.md). Blocks of 1024
  // threads: ptxas keeps some f32 and f64 ones to 32 registers, two blocks
  // an SM, and spills a few words (4 to 12 bytes) rather than lose one.
  constexpr int kFewWords = 16;
  struct Case {
    nf::Shape shape;
    nf::Axes axes;
  };
  const std::vector<Case> cases = {
      {{323, 323, 323}, {0, 2}},    {{323, 323, 323}, {1, 2}}, {{75, 75, 75, 75}, {0, 3}},
      {{1297, 16, 41, 39}, {0, 3}}, {{5793, 5793}, {1}},       {{4096, 4096}, {0}},
  };
  std::set<std::string> seen;  // each kernel compiled once
  for (nf::DType dtype : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
    for (const Case& c : cases) {
      const nf::Expr x(nf::planned_array(dtype, c.shape));
      for (const nf::Expr& e : {x - nf::mean(x, c.axes), nf::var(x, c.axes)}) {
        for (const std::string& source : nf::plan({e}).sources()) {
          if (!seen.insert(source).second) continue;
          INFO(source.substr(source.find("// signature:"), 160));
          const Resources r = ptxas_report(source, "sm_90");
          const bool blocks_of_1024 = source.find("__launch_bounds__(1024)") != std::string::npos;
          INFO(nf::name(dtype) << " " << nf::to_string(c.shape) << ": " << r.registers
                               << " registers, " << r.spill_stores << " bytes spilled");
          CHECK(r.spill_stores <= (blocks_of_1024 ? kFewWords : 0));
          CHECK(r.spill_loads <= (blocks_of_1024 ? kFewWords : 0));
        }
      }
    }
  }
}

TEST_CASE("rows broadcast back store each vector with one instruction", "[host][codegen]") {
  // Rows of odd width are read and written in vectors from `head` elements
  // in, an address found at run time; NVVM stored the first of them a lane
  // or two at a time until nf_store_vector (bench/RESULTS.md). Each thread
  // stores its vectors whole and at most one element of the row's ends.
  for (nf::DType dtype : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
    for (const nf::Shape& shape : {nf::Shape{323, 323, 323}, nf::Shape{5793, 5793}}) {
      const nf::Expr x(nf::planned_array(dtype, shape));
      const std::vector<std::string> sources = nf::plan({x - nf::mean(x, -1)}).sources();
      REQUIRE(sources.size() == 1);
      INFO(nf::name(dtype) << " " << nf::to_string(shape) << ": "
                           << sources[0].substr(sources[0].find("// signature:"), 120));
      CHECK(count(sources[0], ";shifted;") == 1);
      const std::string ptx = nf::jit::compile_ptx(sources[0], "sm_90");
      CHECK(count(ptx, "st.global.v4.") >= 1);
      CHECK(count(ptx, "st.global") - count(ptx, "st.global.v4.") <= 1);
    }
  }
}
