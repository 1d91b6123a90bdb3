#include "run_case.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

#include "compare.hpp"
#include "emulated_program.hpp"
#include "graph/build.hpp"

namespace nf::fuzz {
namespace {

// The roots the public API would hand to the planner for `s`, and the
// arrays they are written to (Array::write and Array::update in
// src/api/assign.cpp).
struct Lowered {
  std::vector<NodePtr> roots;
  std::vector<Array> outputs;
  std::vector<Array> results;  // what the statement's caller sees
};

Lowered lower(const Statement& s, const std::vector<Array>& inputs) {
  const std::vector<Expr> roots = build(s, inputs);
  Lowered l;
  if (s.kind == Statement::Kind::assign || s.kind == Statement::Kind::eval) {
    for (const Expr& e : roots) {
      l.roots.push_back(e.node());
      l.outputs.push_back(nf::empty(e.shape(), e.dtype()));
    }
    l.results = l.outputs;
    return l;
  }
  const Array target = apply(s.target_view, inputs.at(std::size_t(s.target)));
  Expr e = roots.at(0);
  if (s.kind == Statement::Kind::update) {
    if (s.op == '+') e = Expr(target) + e;
    if (s.op == '-') e = Expr(target) - e;
    if (s.op == '*') e = Expr(target) * e;
    if (s.op == '/') e = Expr(target) / e;
  }
  l.roots.push_back(make_broadcast(make_cast(e.node(), target.dtype()), target.shape()));
  l.outputs.push_back(target);
  l.results.push_back(inputs.at(std::size_t(s.target)));
  return l;
}

// The tolerance of each result: its dtype's, loosened to that of the least
// precise floating dtype computed on the way (an f64 result of f32 ops
// carries f32 rounding), at the scale of the values read; integer results
// stay exact.
std::vector<Tolerance> tolerances(const Statement& s, const std::vector<Array>& inputs) {
  const std::vector<Expr> roots = build(s, inputs);
  double loosest = 0;
  std::vector<const Node*> todo;
  std::unordered_set<const Node*> seen;
  for (const Expr& e : roots) todo.push_back(e.node().get());
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (is_floating(n->dtype)) loosest = std::max(loosest, tolerance(n->dtype, s.depth).rel);
    for (const NodePtr& in : n->inputs) todo.push_back(in.get());
  }
  double magnitude = 0;
  for (const Input& in : s.inputs) {
    for (double v : in.values) {
      if (std::isfinite(v)) magnitude = std::max(magnitude, std::fabs(v));
    }
  }
  std::vector<Tolerance> out;
  for (const Expr& e : roots) {
    const DType t = s.kind == Statement::Kind::update || s.kind == Statement::Kind::write
                        ? inputs.at(std::size_t(s.target)).dtype()
                        : e.dtype();
    Tolerance tol = tolerance(t, s.depth);
    if (!tol.exact) tol.rel = std::max(tol.rel, loosest);
    tol.magnitude = magnitude;
    out.push_back(tol);
  }
  return out;
}

Outcome compare_all(const std::vector<Array>& got, const std::vector<Array>& want,
                    const std::vector<Tolerance>& tol) {
  Outcome o;
  for (std::size_t r = 0; r < want.size(); ++r) {
    const std::string d = compare(got.at(r), want[r], tol.at(r));
    if (d.empty()) continue;
    o.ok = false;
    o.report += "result " + std::to_string(r) + ": " + d;
  }
  return o;
}

template <class F>
std::string attempt(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

Outcome both(const Statement& s, const std::vector<Array>& want_inputs,
             const std::function<std::vector<Array>()>& run_got,
             const std::function<std::vector<Array>()>& run_want, const char* got_name) {
  std::vector<Array> got, want;
  const std::string want_error = attempt([&] { want = run_want(); });
  const std::string got_error = attempt([&] { got = run_got(); });
  if (!want_error.empty() || !got_error.empty()) {
    // A statement both backends refuse is no mismatch.
    if (!want_error.empty() && !got_error.empty()) return {};
    return {false, std::string(got_name) + (got_error.empty() ? " ran" : " threw: " + got_error) +
                       "\nthe CPU backend " +
                       (want_error.empty() ? "ran" : "threw: " + want_error) + "\n"};
  }
  return compare_all(got, want, tolerances(s, want_inputs));
}

}  // namespace

Outcome run_emulated_case(const Statement& s, const jit::ReduceLimits& limits) {
  const std::vector<Array> mine = make_inputs(s, Device::cpu());
  const std::vector<Array> theirs = make_inputs(s, Device::cpu());
  return both(
      s, theirs,
      [&] {
        const Lowered l = lower(s, mine);
        nf::test::run_emulated(l.roots, l.outputs, limits);
        return l.results;
      },
      [&] { return run(s, theirs); }, "the emulated kernels");
}

Outcome run_gpu_case(const Statement& s) {
  const std::vector<Array> gpu = make_inputs(s, Device{Device::Kind::cuda, 0});
  const std::vector<Array> cpu = make_inputs(s, Device::cpu());
  return both(
      s, cpu,
      [&] {
        std::vector<Array> out;
        for (const Array& a : run(s, gpu)) out.push_back(a.to(Device::cpu()));
        return out;
      },
      [&] { return run(s, cpu); }, "the GPU");
}

jit::ReduceLimits emulator_limits(std::uint64_t index, std::string* name) {
  jit::ReduceLimits l = nf::test::sm90_reduce_limits();
  switch (index % 5) {
    case 2:
      *name = "rows read again per pass";
      l.max_held = 0;
      l.split_below = 0;
      break;
    case 3:
      *name = "rows split across blocks";
      l.max_held = 0;
      l.chunk_groups = 64;
      break;
    case 4:
      *name = "rows shared by a cluster";
      l.split_below = 1;
      l.max_held = 1;
      break;
    default:
      *name = "sm_90";
  }
  return l;
}

}  // namespace nf::fuzz
