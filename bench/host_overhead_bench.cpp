// The host cost of a warm statement, part by part, on the CPU backend: no GPU
// needed. The statement is bench::chain on a 128x784 f32 array, the one whose
// wall time per call bench/fusion_bench.cpp measures on a GPU ("chain8-wall").
// Each figure is the median over repeated batches, after warm-up, in
// microseconds per call; one JSON line each:
//
//   chain8-build           building the expression
//   chain8-teardown        destroying it
//   chain8-make-program    the program of its root (CSE, topological order)
//   chain8-statement-key   the key of that program writing one output
//   chain8-plan-lookup     a hit of the GPU plan cache, key included
//   chain8-host-path       the four above in one loop
//   chain8-bind            the CUDA backend's run of a cached plan, stand-in kernels:
//                          placing values and packing every kernel's
//                          arguments, without cuLaunchKernel
//   chain8-gpu-statement   `y = chain(x, ...)` over arrays that claim cuda:0
//                          (host memory behind them) with stand-in kernels:
//                          the whole warm statement (build, program, plan hit,
//                          aliasing check, bind, teardown) but the launch.
//                          y's buffer is reused, as on a GPU, so no device
//                          memory is allocated or freed
//   scale-gpu-statement    the same for `y = x * 2.0f` (fusion_bench's
//                          "scale-wall")
//
// The figures leave out every CUDA call, whose cost only a GPU machine can
// measure: a warm single-kernel statement makes one, cuLaunchKernel.
//
//   host_overhead_bench [--quick] [--only WORK]
//
// --only times that row alone (and what it needs set up), for a profiler to
// see one part: valgrind --tool=callgrind host_overhead_bench --quick --only
// chain8-gpu-statement.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "api/plan_cache.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/executor.hpp"
#include "graph/node.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"
#include "plan/statement_key.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kCalls = 2000;  // per batch
int g_batches = 41;
const char* g_only = nullptr;  // --only: the one row to time

bool wanted(const char* work) {
  return !g_only || std::strcmp(g_only, work) == 0;
}

// Median microseconds per call of N timed parts of a call. `batch(calls)`
// makes `calls` calls and returns the time spent in each part, so that a
// batch can leave its set-up untimed.
template <std::size_t N, class Batch>
std::array<double, N> medians_us(Batch&& batch) {
  for (int i = 0; i < 3; ++i) batch(kCalls);
  std::array<std::vector<double>, N> per_call;
  for (int rep = 0; rep < g_batches; ++rep) {
    const std::array<Clock::duration, N> t = batch(kCalls);
    for (std::size_t k = 0; k < N; ++k) {
      per_call[k].push_back(std::chrono::duration<double, std::micro>(t[k]).count() / kCalls);
    }
  }
  std::array<double, N> out;
  for (std::size_t k = 0; k < N; ++k) {
    auto& v = per_call[k];
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    out[k] = v[v.size() / 2];
  }
  return out;
}

// The median for a call whose whole cost is timed.
template <class F>
double median_us(F&& f) {
  return medians_us<1>([&](int n) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) f();
    return std::array<Clock::duration, 1>{Clock::now() - t0};
  })[0];
}

// An f32 array that claims to live on cuda:0, with host memory behind it.
nf::Array stand_in_cuda_array(const nf::Array& like) {
  auto s = std::make_shared<nf::Storage>();
  s->device = nf::Device{nf::Device::Kind::cuda, 0};
  s->bytes = std::size_t(like.size()) * sizeof(float);
  s->data = std::malloc(s->bytes);
  s->free_fn = std::free;
  std::memcpy(s->data, like.storage()->data, s->bytes);
  return nf::Array(std::move(s), nf::f32, like.shape(), nf::contiguous_strides(like.shape()), 0);
}

void print_row(const char* work, double us) {
  std::printf("{\"work\":\"%s\",\"shape\":\"(128, 784)\",\"backend\":\"cpu\",\"us\":%.3f}\n", work,
              us);
}

// Times `f` (median microseconds per call) and prints its row, unless --only
// names another.
template <class F>
void row(const char* work, F&& f) {
  if (wanted(work)) print_row(work, median_us(f));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_batches = 5;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: host_overhead_bench [--quick] [--only WORK]\n");
      return 2;
    }
  }
  nf::set_default_device(nf::Device::cpu());
  nf::seed(1);
  const nf::Array x = nf::randn({128, 784});
  const std::vector<nf::Array> outputs{bench::chain(x, 1.5f, 0.25f)};
  const nf::ScheduleOptions options = nf::default_schedule_options();

  // Building and tearing down, each timed on its own call by call so that
  // the allocator stays as warm as in a loop of statements (the clock reads
  // add a few tens of nanoseconds to each figure).
  if (wanted("chain8-build") || wanted("chain8-teardown")) {
    const auto [build, teardown] = medians_us<2>([&](int n) {
      std::array<Clock::duration, 2> t{};
      for (int i = 0; i < n; ++i) {
        const auto t0 = Clock::now();
        std::optional<nf::Expr> e = bench::chain(x, 1.5f, 0.25f);
        const auto t1 = Clock::now();
        e.reset();
        t[0] += t1 - t0;
        t[1] += Clock::now() - t1;
      }
      return t;
    });
    print_row("chain8-build", build);
    print_row("chain8-teardown", teardown);
  }

  const nf::Expr e = bench::chain(x, 1.5f, 0.25f);
  const std::vector<nf::NodePtr> roots{e.node()};
  // Programs made as a GPU statement makes them (execute picks the target).
  constexpr nf::ProgramTarget gpu = nf::ProgramTarget::gpu;
  row("chain8-make-program", [&] { nf::make_program(roots, gpu); });

  const nf::Program p = nf::make_program(roots, gpu);
  row("chain8-statement-key", [&] { nf::statement_key(p, outputs, options); });

  // A warm hit of the GPU plan cache, key included. Without a GPU no launches
  // can be prepared, so the entry holds the schedule alone.
  auto plan = std::make_shared<nf::CachedPlan>();
  plan->schedule = nf::make_schedule(p, options);
  nf::remember_plan(nf::statement_key(p, outputs, options), plan);
  row("chain8-plan-lookup", [&] { nf::cached_plan(nf::cuda::backend(), p, outputs, options); });

  // A warm GPU statement's host path up to its launch: build, program, plan
  // lookup and teardown.
  row("chain8-host-path", [&] {
    const nf::Expr s = bench::chain(x, 1.5f, 0.25f);
    nf::cached_plan(nf::cuda::backend(), nf::make_program({s.node()}, gpu), outputs, options);
  });

  // The warm GPU statement itself, over stand-ins for device arrays. Each
  // statement's first run plans it (a miss: stand-in kernels are "loaded").
  nf::cuda::use_stand_in_kernels(true);
  const nf::Array gx = stand_in_cuda_array(x);
  {
    const nf::Expr ge = bench::chain(gx, 1.5f, 0.25f);
    const nf::Program gp = nf::make_program({ge.node()}, gpu);
    const std::vector<nf::Array> gout{stand_in_cuda_array(x)};
    const auto gplan = nf::cached_plan(nf::cuda::backend(), gp, gout, options);
    row("chain8-bind",
        [&] { nf::cuda::backend().run(*gplan->prepared, gp, gplan->schedule, gout); });
  }
  nf::Array gy = stand_in_cuda_array(x);  // held by gy alone, so every statement reuses it
  row("chain8-gpu-statement", [&] { gy = bench::chain(gx, 1.5f, 0.25f); });
  row("scale-gpu-statement", [&] { gy = gx * 2.0f; });
  return 0;
}
