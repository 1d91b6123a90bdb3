// The planner merges equal subexpressions and orders work inputs-first.
#include <catch2/catch.hpp>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"

#include "api/plan_cache.hpp"
#include "graph/build.hpp"
#include "graph/op_table.hpp"
#include "plan/memory_layout.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"
#include "plan/statement_key.hpp"

namespace {

int count_op(const nf::Program& p, nf::OpId op) {
  int n = 0;
  for (const auto& node : p.nodes) n += node->op == op;
  return n;
}

}  // namespace

TEST_CASE("the mission line computes mean(A,1) once", "[plan]") {
  nf::Array a = nf::ones({4, 8});
  const float eps = 1e-5f;
  // var(A,1) is built separately from the explicit mean(A,1); both reduce the
  // same leaf and the planner keeps one of each.
  nf::Expr e = nf::reciprocal(nf::sqrt(nf::var(a, 1) + eps)) * (a - nf::mean(a, 1));
  nf::Expr twice = e + (a - nf::mean(a, 1));
  const nf::Program p = nf::make_program({twice.node()});
  CHECK(count_op(p, nf::OpId::mean) == 1);
  CHECK(count_op(p, nf::OpId::var) == 1);
  CHECK(count_op(p, nf::OpId::leaf) == 1);
  CHECK(count_op(p, nf::OpId::subtract) == 1);
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    for (int in : p.inputs[i]) CHECK(in < int(i));
  }
}

TEST_CASE("a reduction over axes of length 1 is a cast of its one element", "[plan]") {
  const nf::Array x = nf::array(std::vector<double>{1, -2, 3, 0, 5}, {1, 5}).astype(nf::i32);
  // min and max keep the dtype: the leaf itself.
  const std::pair<nf::OpId, nf::Expr> reductions[] = {
      {nf::OpId::sum, nf::sum(x, 0)},   {nf::OpId::prod, nf::prod(x, 0)},
      {nf::OpId::mean, nf::mean(x, 0)}, {nf::OpId::min, nf::min(x, 0)},
      {nf::OpId::max, nf::max(x, 0)},   {nf::OpId::any, nf::any(x, 0)},
      {nf::OpId::all, nf::all(x, 0)}};
  for (const auto& [op, e] : reductions) {
    const nf::Program p = nf::make_program({e.node()});
    INFO(nf::op_name(op));
    CHECK(count_op(p, op) == 0);
    CHECK(p.nodes.size() == (op == nf::OpId::min || op == nf::OpId::max ? 1 : 2));
  }
  CHECK(nf::Array(nf::mean(x, 0)).dtype() == nf::f64);
  CHECK(nf::Array(nf::any(x, 0)).to_vector<bool>() ==
        std::vector<bool>{true, true, true, false, true});
  // var of one element is 0 (nan with ddof 1), argmax's is 0: still reductions.
  CHECK(nf::var(x, 0).node()->op == nf::OpId::var);
  CHECK(nf::argmax(x, 0).node()->op == nf::OpId::argmax);
  // Over an axis longer than 1 the reduction stays.
  CHECK(nf::sum(x, 1).node()->op == nf::OpId::sum);
}

TEST_CASE("different arrays, constants or streams are not merged", "[plan]") {
  nf::Array a = nf::ones({3}), b = nf::ones({3});
  CHECK(count_op(nf::make_program({(nf::Expr(a) + b).node()}), nf::OpId::leaf) == 2);
  CHECK(count_op(nf::make_program({(a * 2 + a * 3).node()}), nf::OpId::multiply) == 2);
  CHECK(count_op(nf::make_program({(nf::rand({3}) + nf::rand({3})).node()}),
                 nf::OpId::rand_uniform) == 2);
  nf::Expr r = nf::rand({3});
  CHECK(count_op(nf::make_program({(r + r).node()}), nf::OpId::rand_uniform) == 1);
}

TEST_CASE("each program is made afresh though the tables that make it are reused", "[plan]") {
  // Freed nodes' blocks are reused for the next nodes built, so one
  // statement's nodes take the last one's addresses: tables kept from the
  // last program would take them for nodes already added. The first program
  // is large, so that a later one gives its tables back.
  const nf::Array a = nf::ones({3}), b = nf::ones({3});
  for (int round = 0; round < 5; ++round) {
    nf::Expr e = round % 2 ? nf::exp(nf::Expr(b)) - a : nf::Expr(a) * 2 + b;
    if (round == 0) {
      nf::NodePtr n = e.node();
      for (int i = 0; i < 2000; ++i) n = nf::make_elementwise(nf::OpId::negative, {n});
      e = nf::Expr(n);
    }
    const nf::Program p = nf::make_program({e.node()});
    REQUIRE(p.roots == std::vector<int>{int(p.nodes.size()) - 1});
    CHECK(p.nodes.back() == e.node());
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const nf::NodeInputs& ins = p.nodes[i]->inputs;
      REQUIRE(p.inputs[i].size() == ins.size());
      for (std::size_t k = 0; k < ins.size(); ++k) CHECK(p.nodes[p.inputs[i][k]] == ins[k]);
    }
  }
}

TEST_CASE("a lazy expression grown in a loop evaluates without deep recursion", "[plan]") {
  nf::Array a = nf::ones({2}, nf::f64);
  nf::Expr e = a;
  for (int i = 0; i < 20000; ++i) e = e + 1;
  CHECK(nf::Array(e).to_vector<double>() == std::vector<double>{20001, 20001});
}

TEST_CASE("an array named twice in a statement makes one leaf", "[plan]") {
  nf::Array a = nf::ones({2, 3});
  const nf::Expr first = a;
  CHECK(nf::Expr(a).node() == first.node());
  CHECK(nf::Expr(nf::Array(a)).node() == first.node());  // a handle to the same view
  CHECK(nf::Expr(a.T()).node() != first.node());
  CHECK(nf::Expr(a(0, nf::all)).node() != first.node());
  CHECK(nf::Expr(a.copy()).node() != first.node());
  CHECK(nf::Expr(a.astype(nf::f64)).node() != first.node());
}

TEST_CASE("a DAG deeper than the stack holds is torn down without recursion", "[plan]") {
  // Built below the public API, whose depth cap would evaluate it long before.
  nf::NodePtr n = nf::make_leaf(nf::ones({1}));
  for (int i = 0; i < 200000; ++i) n = nf::make_elementwise(nf::OpId::negative, {n});
  CHECK(n->depth == 200000);
  n.reset();
}

TEST_CASE("every value a step reads lives in memory", "[plan]") {
  nf::Array a = nf::ones({3, 4});
  const std::vector<nf::NodePtr> statements = {
      // full(): a broadcast constant is computed, not aliased.
      nf::make_broadcast(nf::make_constant(2.0, nf::f32), {3, 4}),
      (nf::Expr(a.T()) + 1).node(),
      nf::make_leaf(a(nf::all, nf::slice(0, 4, 2))),
      nf::sum(nf::exp(a), 1).node(),
  };
  for (bool fuse : {true, false}) {
    nf::ScheduleOptions o;
    o.fuse = fuse;
    for (const nf::NodePtr& root : statements) {
      const nf::Program p = nf::make_program({root});
      const nf::Schedule s = nf::make_schedule(p, o);
      for (const nf::Step& step : s.steps) {
        for (int r : step.reads) CHECK(s.home[r] != nf::Schedule::Home::none);
      }
      for (std::size_t i = 0; i < s.home.size(); ++i) {
        if (s.home[i] != nf::Schedule::Home::alias) continue;
        CHECK(s.home[p.inputs[i][0]] != nf::Schedule::Home::none);
      }
    }
  }
}

TEST_CASE("a lazy expression grown in a loop is evaluated at a depth cap", "[plan]") {
  nf::Array a = nf::full({3}, 0.5, nf::f64);
  nf::Expr e = a;
  double want = 0.5;
  for (int i = 0; i < 3000; ++i) {
    e = e * 0.999 + a;
    want = want * 0.999 + 0.5;
    REQUIRE(e.node()->depth <= 256);
  }
  const std::vector<double> got = nf::Array(e).to_vector<double>();
  for (double g : got) CHECK(g == Approx(want).epsilon(1e-12));
}

TEST_CASE("a node rebuilt on new inputs takes their device", "[host][plan]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // The GPU's host fallback rebuilds statements over host copies of their
  // arrays; the copies decide where the rebuilt statement runs.
  const nf::NodePtr leaf = nf::make_leaf(nf::ones({4}));
  nf::Node on_gpu = *nf::make_elementwise(nf::OpId::exp, {leaf});
  on_gpu.device = nf::Device{nf::Device::Kind::cuda, 0};
  const nf::NodePtr rebuilt = nf::rebuild(on_gpu, {leaf});
  CHECK(rebuilt->device == nf::Device::cpu());
}

TEST_CASE("a C++ scalar reused across statements keeps each statement's dtype", "[plan]") {
  // Constants are kept per thread and shared between statements; a weak
  // scalar and its casts must stay distinct nodes.
  const nf::Array x = nf::ones({3});
  const nf::Expr weak = 0.5;
  const nf::Expr f32 = x * 0.5;
  const nf::Expr f64 = nf::astype(x, nf::f64) * 0.5;
  CHECK(weak.dtype() == nf::f64);
  CHECK(weak.node()->weak);
  CHECK(f32.node()->inputs[1]->dtype == nf::f32);
  CHECK(f64.node()->inputs[1]->dtype == nf::f64);
  CHECK_FALSE(f64.node()->inputs[1]->weak);
  CHECK(nf::Expr(0.5).node() == weak.node());
  CHECK(nf::Array(f32).to_vector<float>() == std::vector<float>{0.5f, 0.5f, 0.5f});
}

TEST_CASE("a statement's key written over another's is the key made afresh", "[plan]") {
  // The GPU's plan cache writes every statement's key over one kept per thread.
  const nf::Array a = nf::ones({3, 4});
  const std::vector<nf::Array> out{nf::ones({3, 4})};
  const nf::ScheduleOptions o;
  const nf::Program longer = nf::make_program({(nf::exp(nf::Expr(a)) * 2 + a).node()});
  const nf::Program shorter = nf::make_program({(nf::Expr(a) + 1).node()});
  nf::StatementKey reused;
  nf::statement_key(longer, out, o, reused);
  nf::statement_key(shorter, out, o, reused);
  CHECK(reused == nf::statement_key(shorter, out, o));
}

TEST_CASE("a statement's key holds the attributes plans and kernels depend on, not values",
          "[plan]") {
  const nf::Array a = nf::ones({3, 4});
  const std::vector<nf::Array> out{nf::ones({3})};
  const nf::ScheduleOptions o;
  const auto key = [&](const nf::Expr& e) {
    return nf::statement_key(nf::make_program({e.node()}), out, o);
  };
  // A constant's value and a generator's seed are kernel parameters.
  CHECK(key(nf::sum(nf::Expr(a) * 2, 1)) == key(nf::sum(nf::Expr(a) * 3, 1)));
  // ddof is written into the kernel; the axes reduced decide the plan.
  CHECK_FALSE(key(nf::var(a, 1)) == key(nf::var(a, 1, 1)));
  const nf::Array square = nf::ones({3, 3});
  CHECK_FALSE(key(nf::sum(square, 1)) == key(nf::sum(square, 0)));
}

TEST_CASE("a statement that has run is served from the plan cache, on every backend", "[plan]") {
  const nf::Array a = nf::randn({5, 7});
  nf::Array y = nf::empty({5, 7});
  const nf::Expr e = nf::exp(nf::Expr(a)) - nf::mean(a, 1);
  y = e;
  const nf::Program p = nf::make_program({e.node()});
  const std::vector<nf::Array> out{y};
  const auto plan = nf::find_plan(nf::statement_key(p, out, nf::default_schedule_options()));
  REQUIRE(plan != nullptr);
  CHECK(plan->prepared != nullptr);
  CHECK(plan->schedule.steps.size() == 1);
}

TEST_CASE("a reduction broadcast back is cut in two where its walk runs slower so", "[plan]") {
  const std::string saved = nf::target_arch();
  nf::set_target_arch("sm_90");
  // Steps of x - mean(x, axes), x an array of `t` and `shape` planned for sm_90.
  const auto steps = [](nf::DType t, const nf::Shape& shape, nf::Axes axes) {
    const nf::Expr x = nf::planned_array(t, shape);
    const std::string plan = nf::plan({x - nf::mean(x, axes)}).to_string();
    int n = 0;
    for (std::size_t at = plan.find("step "); at != std::string::npos;
         at = plan.find("step ", at + 1))
      ++n;
    return n;
  };
  // Columns a cluster shares, split columns, rows over two reduced dims of halves.
  CHECK(steps(nf::f16, {5793, 5793}, 0) == 2);
  CHECK(steps(nf::f32, {4095, 4095}, 0) == 2);
  CHECK(steps(nf::f16, {323, 323, 323}, {0, 1}) == 2);
  // Over (0, 2) of halves in rows of odd length: over 2, then 0, then back
  // (plan/reduction_cut.hpp); of even length, one kernel in vectors.
  CHECK(steps(nf::f16, {323, 323, 323}, {0, 2}) == 3);
  CHECK(steps(nf::f16, {324, 324, 324}, {0, 2}) == 1);
  // Floats whose rows start on 16 bytes, held rows, rows of floats over two
  // reduced dims, and a reduction too small to gain from a kernel more.
  CHECK(steps(nf::f32, {4096, 4096}, 0) == 1);
  CHECK(steps(nf::f16, {5793, 5793}, 1) == 1);
  CHECK(steps(nf::f32, {64, 64, 64, 64}, {0, 3}) == 1);
  CHECK(steps(nf::f16, {512, 512}, 0) == 1);
  // The plan says where it cut, and why.
  const auto says_cut = [](nf::DType t, const nf::Shape& shape, nf::Axes axes) {
    const nf::Expr x = nf::planned_array(t, shape);
    return nf::plan({x - nf::mean(x, axes)}).to_string().find("cut in two:") != std::string::npos;
  };
  CHECK(says_cut(nf::f16, {5793, 5793}, 0));
  CHECK_FALSE(says_cut(nf::f32, {4096, 4096}, 0));
  // The reduction reads the rows last-first where they pass L2, so that the
  // elementwise kernel starts on the rows L2 holds; alone, first-first.
  const nf::Expr big = nf::planned_array(nf::f16, {5793, 5793});
  const std::vector<std::string> cut = nf::plan({big - nf::mean(big, 0)}).sources();
  REQUIRE(cut.size() == 3);
  CHECK(cut[0].find(";last-first") != std::string::npos);
  CHECK(cut[0].find("(gridDim.x - 1 - blockIdx.x)") != std::string::npos);
  CHECK(cut[1].find("(gridDim.x - 1 - blockIdx.x)") == std::string::npos);
  const std::vector<std::string> alone = nf::plan({nf::mean(big, 0)}).sources();
  REQUIRE(alone.size() == 2);
  CHECK(alone[0].find(";last-first") == std::string::npos);
  CHECK(alone[0].find("(gridDim.x - 1 - blockIdx.x)") == std::string::npos);
  nf::set_target_arch(saved);

  // Run so: the reduction step writes the means, the fused one reads them.
  nf::seed(11);
  const nf::Array x = nf::randn({4100, 1100}, nf::f16);
  const nf::Array y = x - nf::mean(x, 0);
  const nf::Program p = nf::make_program({(x - nf::mean(x, 0)).node()});
  const std::vector<nf::Array> out{y};
  const auto plan = nf::find_plan(nf::statement_key(p, out, nf::default_schedule_options()));
  REQUIRE(plan != nullptr);
  REQUIRE(plan->schedule.steps.size() == 2);
  CHECK(plan->schedule.steps[0].kind == nf::StepKind::reduction);
  CHECK(plan->schedule.steps[1].kind == nf::StepKind::fused);
  const std::vector<double> xs = x.to_vector<double>(), ys = y.to_vector<double>();
  std::vector<double> mean(1100, 0.0);
  for (std::size_t i = 0; i < xs.size(); ++i) mean[i % 1100] += xs[i] / 4100;
  double worst = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double want = xs[i] - mean[i % 1100];
    worst = std::max(worst, std::abs(ys[i] - want) / (std::abs(want) * 1e-3 + 1e-4));
  }
  CHECK(worst <= 1.0);
}

TEST_CASE("a reduction over the innermost axis and others apart from it is cut in two", "[plan]") {
  // The reductions of the program of `e`, in order: op and axes.
  const auto reductions = [](const nf::Expr& e) {
    std::vector<std::pair<nf::OpId, std::vector<int>>> r;
    for (const auto& n : nf::make_program({e.node()}, nf::ProgramTarget::gpu).nodes) {
      if (nf::op_kind(n->op) == nf::OpKind::reduction) r.push_back({n->op, n->axes});
    }
    return r;
  };
  using R = std::vector<std::pair<nf::OpId, std::vector<int>>>;
  const nf::Expr x = nf::planned_array(nf::f16, {323, 323, 323});
  // First over the run of reduced axes that ends innermost (length-1 axes
  // neither break nor join it), in f32 for sums of halves, then the rest.
  CHECK(reductions(nf::sum(x, {0, 2})) == R{{nf::OpId::sum, {2}}, {nf::OpId::sum, {0}}});
  const nf::Program cut = nf::make_program({nf::sum(x, {0, 2}).node()}, nf::ProgramTarget::gpu);
  CHECK(cut.nodes[1]->dtype == nf::f32);
  // Its last node stands for the reduction: the same shape and dtype.
  CHECK(cut.nodes.back()->shape == nf::Shape{1, 323, 1});
  CHECK(cut.nodes.back()->dtype == nf::f16);
  // The plan says where it cut, and why.
  const auto says_cut = [](const nf::Expr& e) {
    return nf::plan({e}).to_string().find("the first half of a reduction cut in two") !=
           std::string::npos;
  };
  CHECK(says_cut(nf::sum(x, {0, 2})));
  CHECK_FALSE(says_cut(nf::sum(x, {1, 2})));
  // For the CPU backend, whole: the leaf and the sum.
  CHECK(nf::make_program({nf::sum(x, {0, 2}).node()}).nodes.size() == 2);
  const nf::Expr y = nf::planned_array(nf::f32, {20, 30, 1, 40, 600, 1});
  CHECK(reductions(nf::mean(y, {0, 3, 4, 5})) ==
        R{{nf::OpId::mean, {3, 4}}, {nf::OpId::mean, {0}}});
  // A result used at its own size is still cut.
  CHECK(reductions(nf::sqrt(nf::mean(y, {0, 3, 4})) * 2.0f).size() == 2);
  CHECK(reductions(nf::max(y, {1, 4})) == R{{nf::OpId::max, {4}}, {nf::OpId::max, {1}}});
  // Whole: adjacent axes, arrays L2 holds (8 and 34 MB), short runs, a
  // view, ops whose partial results are not their own kind, integers, f64.
  CHECK(reductions(nf::sum(x, {1, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::planned_array(nf::f16, {161, 161, 161}), {0, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::planned_array(nf::f16, {256, 256, 256}), {0, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::planned_array(nf::f32, {4096, 512, 8}), {0, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::transpose(x), {0, 2})).size() == 1);
  CHECK(reductions(nf::var(x, {0, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::planned_array(nf::i32, {323, 323, 323}), {0, 2})).size() == 1);
  CHECK(reductions(nf::sum(nf::planned_array(nf::f64, {323, 323, 323}), {0, 2})).size() == 1);
  // Whole where the statement broadcasts it back, through a view or a
  // smaller node: one kernel reads x once for both. But for halves in rows
  // of odd length, which one kernel does not read in vectors.
  const nf::Expr e = nf::planned_array(nf::f16, {324, 324, 324});
  const nf::Expr f = nf::planned_array(nf::f32, {323, 323, 323});
  CHECK(reductions(e - nf::mean(e, {0, 2})).size() == 1);
  CHECK(reductions(f - nf::mean(f, {0, 2})).size() == 1);
  CHECK(reductions(x - nf::mean(x, {0, 2})).size() == 2);
  CHECK(reductions(e * (nf::max(e, {0, 2}) + 1.0f)).size() == 1);
  const nf::Expr kept = nf::reshape(nf::sum(e, {0, 2}), {324, 1});
  CHECK(reductions(e / kept).size() == 1);
  // Each root's reductions as the statement asks: eval(sum, e - sum) leaves
  // both whole, as the second broadcasts the first.
  const nf::Expr s = nf::sum(e, {0, 2});
  const nf::Program both = nf::make_program({s.node(), (e - s).node()}, nf::ProgramTarget::gpu);
  int whole = 0;
  for (const auto& n : both.nodes) whole += nf::op_kind(n->op) == nf::OpKind::reduction;
  CHECK(whole == 1);
}

TEST_CASE("a reduction cut in two gives the reduction's values", "[plan]") {
  nf::seed(23);
  // 52 MB of f32 and of f16: large enough to be cut where the statement runs
  // on a GPU (whole on the CPU backend, against the same references). The
  // broadcast back is cut too for the halves, in rows of odd length.
  for (const nf::DType t : {nf::f32, nf::f16}) {
    const long a = 13, b = 57, c = t == nf::f32 ? 17400 : 34801;
    const nf::Array x = nf::randn({a, b, c}, t);
    const nf::Array s = nf::sum(x, {0, 2}), m = nf::max(x, {0, 2});
    const nf::Array back = x - nf::mean(x, {0, 2});
    const std::vector<double> xs = x.to_vector<double>();
    std::vector<double> sum(b, 0.0), top(b, -1e300);
    for (long i = 0; i < a; ++i) {
      for (long j = 0; j < b; ++j) {
        for (long k = 0; k < c; ++k) {
          const double v = xs[(i * b + j) * c + k];
          sum[j] += v;
          top[j] = std::max(top[j], v);
        }
      }
    }
    INFO(nf::name(t));
    REQUIRE(s.shape() == nf::Shape{1, b, 1});
    const std::vector<double> ss = s.to_vector<double>(), ms = m.to_vector<double>();
    const std::vector<double> bs = back.to_vector<double>();
    for (long j = 0; j < b; ++j) {
      // Sums of some 226,000 terms accumulated in f32, written as f16 or f32.
      const double tol = (t == nf::f32 ? 1e-6 : 1e-3) * std::abs(sum[j]) + 1e-2;
      CHECK(std::abs(ss[j] - sum[j]) <= tol);
      CHECK(ms[j] == top[j]);
    }
    const double eps = t == nf::f32 ? 1e-6 : 4e-3;
    double worst = 0;
    for (long i = 0; i < a; ++i) {
      for (long j = 0; j < b; ++j) {
        for (long k = 0; k < c; k += 97) {
          const std::size_t at = std::size_t((i * b + j) * c + k);
          const double want = xs[at] - sum[j] / double(a * c);
          worst = std::max(worst, std::abs(bs[at] - want) / (std::abs(want) * eps + eps));
        }
      }
    }
    CHECK(worst <= 1.0);
    // In place, the same values: the halves' statement reads x in two steps
    // before the last writes it.
    nf::Array z = x.copy();
    z = z - nf::mean(z, {0, 2});
    CHECK(z.to_vector<double>() == bs);
  }
}

TEST_CASE("nodes that differ in any one attribute are different nodes", "[host][plan]") {
  // Each pair differs in one attribute of visit_attributes' list: the hash,
  // node equality (no merge) and, but for values, the statement key see it.
  const nf::Array a = nf::ones({4, 4}), b = nf::ones({4, 4});
  const nf::NodePtr x = nf::make_leaf(a);
  const nf::NodePtr column = nf::make_leaf(nf::ones({1, 4, 1}));
  const nf::NodePtr cube = nf::make_leaf(nf::ones({3, 3, 3}));
  const std::vector<std::pair<nf::NodePtr, nf::NodePtr>> pairs = {
      {nf::make_constant(2.0, nf::f32), nf::make_constant(3.0, nf::f32)},
      {nf::make_iota({4, 4}, 0, nf::f32), nf::make_iota({4, 4}, 1, nf::f32)},
      {nf::make_reduction(nf::OpId::var, x, 1), nf::make_reduction(nf::OpId::var, x, 1, 1)},
      // Axes of length 1, so that the shapes are equal (var: a sum over them is a cast).
      {nf::make_reduction(nf::OpId::var, column, 0), nf::make_reduction(nf::OpId::var, column, 2)},
      {nf::make_permute(cube, {1, 0, 2}), nf::make_permute(cube, {2, 1, 0})},
      {nf::make_random(nf::OpId::rand_uniform, {4, 4}, nf::f32, 1, 0),
       nf::make_random(nf::OpId::rand_uniform, {4, 4}, nf::f32, 2, 0)},
      {nf::make_random(nf::OpId::rand_uniform, {4, 4}, nf::f32, 1, 0),
       nf::make_random(nf::OpId::rand_uniform, {4, 4}, nf::f32, 1, 1)},
      {nf::make_matmul(x, nf::make_leaf(b), nf::MatmulPrecision::f32),
       nf::make_matmul(x, nf::make_leaf(b), nf::MatmulPrecision::tf32)},
  };
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    INFO("pair " << i);
    const auto& [p, q] = pairs[i];
    REQUIRE(p->op == q->op);
    REQUIRE(p->shape == q->shape);
    CHECK(p->hash != q->hash);
    CHECK_FALSE(nf::same_attributes(*p, *q));
    CHECK(nf::same_attributes(*p, *p));
    const nf::Program both = nf::make_program({p, q});
    CHECK(both.roots[0] != both.roots[1]);
  }
}
