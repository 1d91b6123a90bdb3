// Code generation, checked without a GPU: what the planner fuses, that the
// source is canonical, and that NVRTC compiles every op for real targets.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "statements.hpp"

#include "compile/nvrtc_compiler.hpp"
#include "graph/build.hpp"
#include "graph/op_table.hpp"
#include "plan/memory_layout.hpp"

using nf::test::count;
using nf::test::filled;

TEST_CASE("an 8-op elementwise chain is one kernel", "[host][codegen]") {
  nf::Array a = nf::ones({64, 32}), b = nf::ones({64, 32});
  nf::Expr chain = nf::tanh(nf::exp(a * 0.5f + b) - 1.0f) * b / (nf::abs(a) + 2.0f);
  const nf::Plan p = nf::plan({chain});
  CHECK(p.kernel_count() == 1);
  CHECK(p.gemm_count() == 0);
  REQUIRE(p.sources().size() == 1);
  CHECK(count(p.sources()[0], "__global__") == 1);
}

TEST_CASE("an Adam update is one kernel writing three arrays", "[host][codegen]") {
  nf::Array p = nf::ones({1000}), g = nf::ones({1000}), m = nf::ones({1000}), v = nf::ones({1000});
  const float b1 = 0.9f, b2 = 0.999f, lr = 1e-3f, eps = 1e-8f;
  nf::Expr m2 = b1 * m + (1 - b1) * g;
  nf::Expr v2 = b2 * v + (1 - b2) * g * g;
  nf::Expr p2 = p - lr * m2 / (nf::sqrt(v2) + eps);
  const nf::Plan plan = nf::plan({p2, m2, v2});
  CHECK(plan.kernel_count() == 1);
  REQUIRE(plan.sources().size() == 1);
  const std::string src = plan.sources()[0];
  CHECK(count(src, "__restrict__ out") == 3);
  CHECK(count(src, "__restrict__ in") == 4);
  INFO(plan.to_string());
  CHECK(plan.to_string().find("moves 28000 bytes") != std::string::npos);
}

TEST_CASE("generated source is canonical: data and scalar values are parameters",
          "[host][codegen]") {
  nf::Array a = nf::ones({16, 16}), b = nf::ones({16, 16}), c = nf::zeros({16, 16});
  const std::string s1 = nf::kernel_source(nf::exp(a) * 2.0f + b);
  const std::string s2 = nf::kernel_source(nf::exp(c) * 3.5f + a);
  CHECK(s1 == s2);
  CHECK(s1 != nf::kernel_source(nf::exp(a) * 2.0f - b));
  CHECK(s1 != nf::kernel_source(nf::exp(a.T()) * 2.0f + b));  // a strided view
  CHECK(s1 != nf::kernel_source(nf::exp(a.astype(nf::f16)) * 2.0f + b));
}

TEST_CASE("views read into flat outputs take vectors along the collapsed dims", "[host][codegen]") {
  nf::Array a = nf::ones({8, 5}), row = nf::ones({5});
  const std::string flat = nf::kernel_source(a + 1.0f);
  CHECK(flat.find("nf_vec<nf_f32, 4>") != std::string::npos);
  CHECK(flat.find("// Flat vectors:") != std::string::npos);
  // A row (a bias) and a column: no division. Rows of 5 take vectors of the
  // flat arrays that cross the rows' ends, the views an element at a time.
  const std::string bcast = nf::kernel_source(a + row);
  CHECK(bcast.find(";rank2;vec4x2;wrapping;in:f32/flat:f32/strided;") != std::string::npos);
  CHECK(bcast.find("// Broadcast vectors:") != std::string::npos);
  CHECK(bcast.find("% dom") == std::string::npos);
  CHECK(bcast.find("/= dom") == std::string::npos);
  const std::string column = nf::kernel_source(nf::ones({8, 4}) + nf::ones({8, 1}));
  CHECK(column.find(";collapsed;in:f32/flat:f32/bcast;") != std::string::npos);
  // Rows of 8 elements take vectors of 4; (2, 3, 8) + (8,) merges its outer
  // dims, (4, 3, 8) + (4, 1, 8) keeps three; f16 takes 8 elements a vector.
  const std::string rows3 = nf::kernel_source(nf::ones({2, 3, 8}) + nf::ones({8}));
  CHECK(rows3.find(";rank2;vec4x2;collapsed;") != std::string::npos);
  const std::string mixed = nf::kernel_source(nf::ones({4, 3, 8}) + nf::ones({4, 1, 8}));
  CHECK(mixed.find(";rank3;vec4x2;collapsed;in:f32/flat:f32/contig;") != std::string::npos);
  const std::string half =
      nf::kernel_source(nf::ones({4, 16}, nf::f16) + nf::ones({4, 1, 16}, nf::f16));
  CHECK(half.find("nf_vec<unsigned short, 8>") != std::string::npos);
  // A transposed view goes through shared-memory tiles; a stepped one is
  // read an element at a time.
  const std::string transposed = nf::kernel_source(nf::ones({64, 64}) + nf::ones({64, 64}).T());
  CHECK(transposed.find(";tiles0:32x32;in:f32/flat:f32/tile;") != std::string::npos);
  CHECK(transposed.find("// Permuted tiles:") != std::string::npos);
  const nf::Array wide = nf::ones({8, 16});
  const std::string stepped =
      nf::kernel_source(nf::ones({8, 8}) + wide(nf::all, nf::slice(0, 16, 2)));
  CHECK(stepped.find(";collapsed;in:f32/flat:f32/strided;") != std::string::npos);
  const std::string to_half = nf::kernel_source(nf::astype(a, nf::f16) * 2.0f);
  CHECK(to_half.find("nf_f32_to_f16_bits") != std::string::npos);
}

TEST_CASE("flat and broadcast vectors store each vector with one instruction", "[host][codegen]") {
  // One definition stores every 16-byte vector a kernel writes
  // (nf_store_vector): the fused walks' as the reductions'. Rows of 1001
  // halves cross their ends, so the broadcast row is read an element at a
  // time, and the outputs still stored whole; the flat tail goes an element
  // at a time.
  for (nf::DType dtype : {nf::f16, nf::f32, nf::f64}) {
    const nf::Expr x(nf::planned_array(dtype, {999, 1001}));
    const nf::Expr row(nf::planned_array(dtype, {1001}));
    for (const nf::Expr& e : {x * 2.0f + 1.0f, x + row}) {
      const std::vector<std::string> sources = nf::plan({e}).sources();
      REQUIRE(sources.size() == 1);
      INFO(nf::name(dtype) << ": " << sources[0].substr(sources[0].find("// signature:"), 120));
      CHECK(count(sources[0].substr(sources[0].find("// signature:")), "nf_store_vector(") == 1);
      const std::string ptx = nf::jit::compile_ptx(sources[0], "sm_90");
      CHECK(count(ptx, "st.global.v4.b32") >= 1);
    }
  }
}

// On sm_90 a kernel may start before the kernel ahead of it in the stream has
// finished (src/cuda/kernels.cpp), so every kind of generated kernel must
// wait for that one before it touches memory.
TEST_CASE("every generated kernel first waits for the kernels ahead of it", "[host][codegen]") {
  nf::Array v = nf::ones({1 << 22});
  const std::vector<nf::Expr> statements{
      nf::exp(v) * 2.0f,                            // flat elementwise
      nf::ones({8, 5}) + nf::ones({5}),             // strided elementwise
      nf::test::softmax(nf::ones({1024, 32768})),   // rows prefetched
      nf::test::layernorm(nf::ones({128, 65536})),  // rows shared by a cluster
      nf::test::layernorm(nf::ones({1, 1 << 24})),  // a row split over blocks (two kernels)
      nf::sum(nf::ones({32768, 1024}), 0),          // columns
      nf::argmax(v)};                               // to one value
  int kernels = 0;
  for (const nf::Expr& e : statements) {
    for (const std::string& src : nf::plan({e}).sources()) {
      const std::size_t body = src.find(") {\n", src.find("__global__"));
      REQUIRE(body != std::string::npos);
      CHECK(src.substr(body + 4, 33) == "  nf_wait_for_earlier_kernels();\n");
      ++kernels;
    }
  }
  CHECK(kernels == 10);
}

TEST_CASE("NF_FUSION=off runs one kernel per op", "[host][codegen]") {
  nf::Array a = nf::ones({4});
  nf::Expr e = nf::exp(a) * 2.0f + 1.0f;
  CHECK(nf::plan({e}).kernel_count() == 1);
  setenv("NF_FUSION", "off", 1);
  const int unfused = nf::plan({e}).kernel_count();
  unsetenv("NF_FUSION");
  CHECK(unfused == 3);
}

// Every elementwise op of the op table, for every dtype it accepts, in
// kernels that NVRTC compiles for sm_80 and sm_90. The ops of one dtype share
// a multi-output kernel, so the whole table takes a few compiles.
TEST_CASE("every elementwise op x dtype compiles with NVRTC for sm_80 and sm_90",
          "[host][codegen][nvrtc]") {
  struct Row {
    nf::OpId op;
    int arity;
  };
  const std::vector<Row> rows = {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) {nf::OpId::name, arity},
#include "graph/ops.def"
  };
  for (nf::DType t : nf::all_dtypes) {
    nf::Array x = filled({33, 7}, t), y = filled({33, 7}, t), z = filled({33, 7}, t);
    std::vector<nf::Expr> roots;
    for (const Row& r : rows) {
      const nf::OpInfo& info = nf::op_info(r.op);
      if (info.accepts == nf::Accepts::numeric && t == nf::bool_) continue;
      std::vector<nf::NodePtr> ins{nf::Expr(x).node()};
      if (r.arity >= 2) ins.push_back(nf::Expr(y).node());
      if (r.arity == 3) ins.insert(ins.begin(), nf::Expr(z > 2).node());
      if (r.op == nf::OpId::clip)
        ins = {nf::Expr(x).node(), nf::Expr(y).node(), nf::Expr(z).node()};
      roots.push_back(nf::Expr(nf::make_elementwise(r.op, ins)));
    }
    const nf::Plan p = nf::plan(roots);
    INFO(nf::name(t) << ": " << p.sources().size() << " kernels");
    CHECK(p.sources().size() <= 4);
    for (const std::string& src : p.sources()) {
      for (const char* arch : {"sm_80", "sm_90"}) {
        INFO(arch);
        const nf::jit::KernelImage image = nf::jit::compile(src, arch);
        CHECK(image.cubin);
        CHECK(image.data.size() > 4);
      }
    }
  }
}

// The planner splits what one kernel cannot hold: a 500-term sum of distinct
// arrays (built as a balanced tree, so no depth cap intervenes) becomes
// kernels that each read at most 48 arrays, and still sums every term.
TEST_CASE("a 500-term sum of distinct arrays splits into kernels that compile", "[host][codegen]") {
  std::vector<nf::Array> terms;
  std::vector<nf::Expr> level;
  double want = 0;
  for (int k = 0; k < 500; ++k) {
    terms.push_back(nf::full({3, 5}, 0.5 + k, nf::f64));
    level.push_back(terms.back());
    want += 0.5 + k;
  }
  while (level.size() > 1) {
    std::vector<nf::Expr> next;
    for (std::size_t k = 0; k + 1 < level.size(); k += 2) next.push_back(level[k] + level[k + 1]);
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  const nf::Plan p = nf::plan({level[0]});
  CHECK(p.kernel_count() >= 500 / 48);
  for (const std::string& src : p.sources()) CHECK(count(src, "__restrict__ in") <= 48);
  const nf::jit::KernelImage image = nf::jit::compile(p.sources()[0], "sm_90");
  CHECK(image.cubin);
  CHECK(nf::Array(level[0]).to_vector<double>() == std::vector<double>(15, want));
}
