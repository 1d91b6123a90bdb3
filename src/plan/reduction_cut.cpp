#include "plan/reduction_cut.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/shape_util.hpp"
#include "graph/build.hpp"
#include "graph/op_table.hpp"

namespace nf {
namespace {

// Why cut: one kernel reduces each output's elements, which lie in runs of
// the innermost axes with kept axes between the runs, by a general walk an
// element at a time; cut, the first reads x as rows, in vectors at copy
// speed, into partial results a run long fewer, and the second reads those.
// Sum over (0, 2) of (323, 323, 323) f16 on an H200: 34.3 us whole, 16.9 us
// over axis 2 alone (bench/results/sweep-reduce-64M-h200-main.jsonl).

// Arrays the L2 cache holds are read fast by either walk; a second kernel's
// launch then costs more than it saves. On an H200 (60 MB of L2), sums of
// 16 MiB cut ran 1.37-1.49x the time whole (median by dtype), of 62-67 MB
// 0.80x (halves) and 0.97x (f32); sizes between are not measured
// (bench/RESULTS.md, 2026-11-28).
constexpr std::int64_t kCutFromBytes = std::int64_t(48) << 20;
// Runs shorter than this many elements leave partial results too many for
// the cut to pay (f32 partials of runs of 16 halves: an eighth of x).
constexpr std::int64_t kShortestRun = 16;
// Operand trees larger than this are not walked to check their order, nor
// statements four times larger searched for broadcasts.
constexpr int kMostNodesChecked = 64;
constexpr int kMostNodesSearched = 4 * kMostNodesChecked;

// Reductions over partial results of their own (the op table's
// reduces_own_results); of floats only, below, so not any and all. prod is
// left whole until measured.
bool cuttable_op(OpId op) {
  return reduces_own_results(op) && op != OpId::prod;
}

// Whether x's elements lie in C order wherever it reads memory of its own
// shape: leaves contiguous, no views, within kMostNodesChecked nodes. Leaves
// of other shapes are broadcast operands; generators, products and
// reductions are computed into C order.
bool in_c_order(const NodePtr& x) {
  std::vector<const Node*> todo{x.get()};
  for (int seen = 0; !todo.empty(); ++seen) {
    if (seen == kMostNodesChecked) return false;
    const Node& n = *todo.back();
    todo.pop_back();
    switch (op_kind(n.op)) {
      case OpKind::leaf:
        if (n.shape == x->shape && !n.array->is_contiguous()) return false;
        break;
      case OpKind::view:
        return false;
      case OpKind::cast:
      case OpKind::elementwise:
        for (const NodePtr& in : n.inputs) todo.push_back(in.get());
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace

bool BroadcastBack::contains(const Node& reduction) {
  if (!searched_) search();
  return everything_ || read_back_.contains(&reduction);
}

// Each elementwise node is followed down its inputs through views and nodes
// smaller than itself: the reductions found there it reads broadcast. A
// statement too large to search is taken to broadcast every reduction.
void BroadcastBack::search() {
  searched_ = true;
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> todo, below;
  for (const NodePtr& r : roots_) todo.push_back(r.get());
  int steps = 0;
  const auto spent = [&] { return everything_ = everything_ || ++steps > kMostNodesSearched; };
  while (!todo.empty() && !spent()) {
    const Node* m = todo.back();
    todo.pop_back();
    if (!seen.insert(m).second) continue;
    const std::int64_t size = numel(m->shape);
    const OpKind kind = op_kind(m->op);
    for (const NodePtr& in : m->inputs) {
      todo.push_back(in.get());
      if (kind == OpKind::elementwise || kind == OpKind::cast) below.push_back(in.get());
    }
    while (!below.empty() && !spent()) {
      const Node* b = below.back();
      below.pop_back();
      const OpKind k = op_kind(b->op);
      if (k != OpKind::view && numel(b->shape) >= size) continue;
      if (k == OpKind::reduction) read_back_.insert(b);
      if (k == OpKind::view || k == OpKind::elementwise || k == OpKind::cast) {
        for (const NodePtr& in : b->inputs) below.push_back(in.get());
      }
    }
  }
}

ReductionCut cut_reduction(const Node& n, BroadcastBack& broadcast_back) {
  if (op_kind(n.op) != OpKind::reduction || !cuttable_op(n.op)) return {};
  const NodePtr& x = n.inputs[0];
  // f64 reads fast enough whole (cut: median 0.97-1.03x the time).
  if (x->weak || !is_floating(x->dtype) || itemsize(x->dtype) > 4) return {};
  if (numel(x->shape) * std::int64_t(itemsize(x->dtype)) < kCutFromBytes) return {};
  // Axes of length 1 are neither reduced nor kept: they move no element.
  const Shape& shape = x->shape;
  const auto reduced = [&](int a) {
    return std::find(n.axes.begin(), n.axes.end(), a) != n.axes.end();
  };
  int d = int(shape.size()) - 1;
  while (d >= 0 && shape[d] == 1) --d;
  if (d < 0 || !reduced(d)) return {};
  std::vector<int> inner, outer;
  std::int64_t run = 1;
  for (; d >= 0 && (shape[d] == 1 || reduced(d)); --d) {
    if (shape[d] > 1) inner.insert(inner.begin(), d);
    run *= shape[d];
  }
  for (int a : n.axes) {
    if (a < d && shape[a] > 1) outer.push_back(a);
  }
  if (outer.empty() || run < kShortestRun || !in_c_order(x)) return {};
  // Rows of halves of odd length start every other one between two words:
  // one kernel reads them an element at a time, and stores the reduction
  // apart from its broadcast anyway (ReduceWalk::stores_apart). Cut, they
  // gained on all 46 such rows of 64 MiB and more (median 0.87x the time;
  // H200, bench/RESULTS.md, 2026-11-28).
  const bool apart_anyway = itemsize(x->dtype) == 2 && run % 2 == 1;
  if (!apart_anyway && broadcast_back.contains(n)) return {};
  // Partial sums of halves are kept in f32, as one kernel accumulates them.
  const ResultRule rule = op_info(n.op).rule;
  const bool widen =
      (rule == ResultRule::accumulate || rule == ResultRule::average) && itemsize(x->dtype) < 4;
  NodePtr first = make_reduction(n.op, widen ? make_cast(x, f32) : x, Axes(inner));
  return {make_cast(make_reduction(n.op, first, Axes(outer)), n.dtype), std::move(first)};
}

}  // namespace nf
