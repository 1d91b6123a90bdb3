// A kernel's signature determines its source: the kernel tables key kernels
// by signature and the disk cache by source, so two statements of equal
// signatures must give byte-identical kernels, or a cache warmed at one shape
// misses at another of the same walk. Checked over a sweep of statements,
// shapes, dtypes and walks, without a GPU.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "statements.hpp"

#include "codegen/step_kernels.hpp"
#include "graph/build.hpp"
#include "plan/memory_layout.hpp"
#include "plan/program.hpp"

using nf::test::layernorm;
using nf::test::softmax;

namespace {

// Every kernel the statement `roots` launches, walked as `limits` say.
std::vector<nf::jit::GeneratedKernel> kernels_of(const std::vector<nf::Expr>& roots,
                                                 const nf::jit::ReduceLimits& limits) {
  std::vector<nf::NodePtr> nodes;
  std::vector<nf::Array> outputs;
  for (const nf::Expr& e : roots) {
    nodes.push_back(e.node());
    outputs.push_back(nf::planned_array(e.dtype(), e.shape()));
  }
  const nf::Program p = nf::make_program(nodes);
  const nf::Schedule s = nf::make_schedule(p, nf::default_schedule_options());
  const auto layouts = nf::memory_layouts(p, s, outputs);
  std::vector<nf::jit::GeneratedKernel> out;
  for (const nf::Step& step : s.steps) {
    for (auto& k : nf::jit::StepKernels(p, s, step, layouts, outputs, limits).generated()) {
      out.push_back(std::move(k));
    }
  }
  return out;
}

struct NamedLimits {
  const char* name;
  nf::jit::ReduceLimits limits;
};

std::vector<NamedLimits> walks() {
  std::vector<NamedLimits> w = {
      {"sm_90", nf::jit::reduce_limits_for("sm_90", {})},
      {"sm_80", nf::jit::reduce_limits_for("sm_80", {})},
  };
  nf::jit::ReduceLimits l;
  l.max_held = 0;
  l.chunk_groups = 400;
  w.push_back({"split", l});
  l = {};
  l.max_held = 0;
  l.split_below = 0;
  w.push_back({"streamed", l});
  l = {};
  l.split_below = 1;
  l.max_held = 3;
  w.push_back({"clustered", l});
  l = {};
  l.prefetch_from = 1;
  l.prefetch_max = 1 << 20;
  w.push_back({"prefetched", l});
  l = {};
  l.split_below = 1;
  l.prefetch_max = 224 << 10;
  w.push_back({"shared columns", l});
  return w;
}

}  // namespace

TEST_CASE("equal signatures give byte-identical sources over a sweep of shapes and walks",
          "[host][codegen]") {
  const std::vector<nf::Shape> shapes = {{3, 1000},    {3, 1024},  {5, 2001},   {2, 4096},
                                         {64, 4000},   {7, 40000}, {1, 100000}, {2, 1000000},
                                         {2, 1200000}, {300, 37},  {1000, 129}};
  std::map<std::string, std::string> by_signature;
  std::map<std::string, int> seen;
  for (const NamedLimits& walk : walks()) {
    for (nf::DType t : {nf::f32, nf::f16, nf::f64}) {
      for (const nf::Shape& shape : shapes) {
        const nf::Array x = nf::empty(shape, t);
        const nf::Array row = nf::empty({1, shape[1]}, t), col = nf::empty({shape[0], 1}, t);
        const nf::Array across = nf::empty({shape[1], shape[0]}, t);
        const std::vector<std::vector<nf::Expr>> statements = {
            {nf::sum(x, 1)},
            {layernorm(x)},
            {softmax(x)},
            {nf::logsumexp(x, 1), nf::argmax(x, 1)},
            {nf::var(x, 0)},
            {x / nf::sum(x, 0)},
            {nf::sum(x)},
            {nf::relu(x * 2 + row)},
            {x - col},
            {x.T() + across},
            // Attributes written into the code: iota's axis, ddof.
            {nf::sum(x * nf::Expr(nf::make_iota(shape, 0, t)), 1)},
            {nf::sum(x * nf::Expr(nf::make_iota(shape, 1, t)), 1)},
            {nf::var(x, 1, 1)},
            {nf::std(x, 1, 1)},
            {nf::var(x, 1)},
        };
        for (std::size_t i = 0; i < statements.size(); ++i) {
          for (const nf::jit::GeneratedKernel& k : kernels_of(statements[i], walk.limits)) {
            const auto [at, fresh] = by_signature.emplace(k.signature, k.source);
            ++seen[k.signature];
            if (fresh) continue;
            INFO(walk.name << ", " << nf::name(t) << ", " << nf::to_string(shape) << ", statement "
                           << i << ": " << k.signature);
            CHECK(at->second == k.source);
          }
        }
      }
    }
  }
  // The sweep is only a test where shapes share kernels.
  int shared = 0;
  for (const auto& [sig, n] : seen) shared += n > 1;
  CHECK(shared > 50);
}

TEST_CASE("split rows of 1,000,000 and 1,200,000 elements run the same kernels",
          "[host][codegen]") {
  // Rows this long are split across blocks, a kernel per pass (on sm_90 too:
  // a cluster holds at most 262,144 f32). The chunk count is a parameter,
  // not part of the source; warm_start.sh relies on this on a GPU.
  for (const char* arch : {"sm_80", "sm_90"}) {
    const nf::jit::ReduceLimits limits = nf::jit::reduce_limits_for(arch, {});
    for (int statement = 0; statement < 2; ++statement) {
      INFO(arch << ", statement " << statement);
      const auto of = [&](std::int64_t cols) {
        const nf::Array x = nf::empty({2, cols});
        return kernels_of({statement == 0 ? nf::sum(x, 1) : layernorm(x)}, limits);
      };
      const auto a = of(1000000), b = of(1200000);
      REQUIRE(a.size() >= 2);
      REQUIRE(b.size() == a.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].name == b[i].name);
        CHECK(a[i].source == b[i].source);
        CHECK(a[i].extents != b[i].extents);
      }
    }
  }
}
