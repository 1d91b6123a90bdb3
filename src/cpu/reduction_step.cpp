// Reduction steps. Where a block can hold the whole reduced extent of its
// outputs (rows of a layer norm), each block reduces its rows and computes
// the consumers that broadcast the results back in the same visit: one read
// of the data. Otherwise (a full sum, long rows, columns) the reduced extent
// is cut too: tasks of (outputs, part of the reduced extent) accumulate
// partial results, the parts combine in a fixed order, and the consumers run
// in a pass of their own. A reduction of two passes (var: the sum, then the
// squared deviations from the mean) reads its elements once per pass, as a
// split kernel does. The parts depend on the shape alone, so results do
// not depend on the number of threads.
#include <algorithm>
#include <optional>

#include "core/shape_util.hpp"
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "cpu/steps.hpp"
#include "cpu/thread_pool.hpp"

namespace nf::cpu {
namespace {

// Enough tasks to keep every core of a large machine busy when the outputs
// are few, fixed so that the combining order is too.
constexpr std::int64_t kMinTasks = 64;
// Outputs per block when the reduced axes are not the innermost: the block's
// rows are then runs of this many consecutive elements.
constexpr std::int64_t kColumnOutputs = 1024;

// A block of the outputs widened by a block of the reduced extent.
Box join(Box outputs, const Box& reduced, const std::vector<int>& axes) {
  for (int a : axes) {
    outputs.lo[a] = reduced.lo[a];
    outputs.hi[a] = reduced.hi[a];
  }
  return outputs;
}

struct Level {
  std::vector<int> reductions;  // the step's reductions that read only earlier levels
};

// The step's reductions by level: a reduction reading the result of another
// (sum((x - mean(x)) ** 2)) comes a level after it.
std::vector<Level> levels_of(const Program& p, const Step& s) {
  std::vector<int> depth(p.nodes.size(), 0);
  std::vector<Level> levels;
  for (int i : s.nodes) {
    int d = 0;
    for (int j : p.inputs[i]) d = std::max(d, depth[j]);
    if (op_kind(p.nodes[i]->op) == OpKind::reduction) {
      d += 1;
      if (int(levels.size()) < d) levels.resize(d);
      levels[d - 1].reductions.push_back(i);
    }
    depth[i] = d;
  }
  return levels;
}

}  // namespace

void run_reduction(const Program& p, const Step& s, const std::vector<Write>& writes,
                   const Memory& mem) {
  const Shape& domain = s.domain;
  Shape out_shape = domain, reduced_shape(domain.size(), 1);
  for (int a : s.axes) {
    out_shape[a] = 1;
    reduced_shape[a] = domain[a];
  }
  const std::int64_t outputs = numel(out_shape), reduced = numel(reduced_shape);
  if (outputs == 0) return;
  const bool rows = !domain.empty() &&
                    std::find(s.axes.begin(), s.axes.end(), int(domain.size()) - 1) != s.axes.end();
  std::int64_t per_reduced, per_output;
  if (rows) {
    per_reduced = std::clamp<std::int64_t>(reduced, 1, kBlockElements);
    per_output = std::max<std::int64_t>(1, kBlockElements / per_reduced);
  } else {
    per_output = std::clamp<std::int64_t>(outputs, 1, kColumnOutputs);
    per_reduced = std::max<std::int64_t>(1, kBlockElements / per_output);
  }
  const Tiling out_tiles(out_shape, per_output), parts(reduced_shape, per_reduced);
  const std::vector<bool> computed = computed_by(p, s);

  if (parts.size() == 1) {
    std::vector<int> targets;
    for (const Write& w : writes) targets.push_back(w.node);
    const std::vector<int> nodes = nodes_to_compute(p, targets, computed, mem);
    parallel_for(out_tiles.size(), [&](std::int64_t t) {
      const Box box = join(out_tiles.box(t), parts.box(0), s.axes);
      BlockEvaluator block(p, mem, box);
      block.compute(nodes);
      for (const Write& w : writes) {
        store(block.value(w.node), sub_array(w.target, block.box_of(w.node)));
      }
    });
    return;
  }

  const std::int64_t splits =
      std::clamp<std::int64_t>((kMinTasks + out_tiles.size() - 1) / out_tiles.size(), 1,
                               std::max<std::int64_t>(parts.size(), 1));
  const Strides reduced_strides = contiguous_strides(reduced_shape);
  Memory known = mem;
  std::vector<bool> producers = computed;
  for (const Level& level : levels_of(p, s)) {
    for (int r : level.reductions) producers[r] = false;
  }
  for (const Level& level : levels_of(p, s)) {
    std::vector<int> inputs;
    for (int r : level.reductions) inputs.push_back(p.inputs[r][0]);
    const std::vector<int> nodes = nodes_to_compute(p, inputs, producers, known);
    const std::size_t nr = level.reductions.size();
    std::size_t rounds = 0;
    for (int r : level.reductions) {
      rounds = std::max(rounds, reduction_passes(p.nodes[r]->op).size());
    }
    // terms[t][k]: reduction k's terms over tile t, a pass each; centres[k]:
    // over all outputs, what its next pass deviates from.
    std::vector<std::vector<std::vector<Partials>>> terms(std::size_t(out_tiles.size()),
                                                          std::vector<std::vector<Partials>>(nr));
    std::vector<std::optional<Array>> centres_of(nr);
    for (std::size_t round = 0; round < rounds; ++round) {
      // The term each reduction takes this round, if it has one.
      std::vector<std::optional<TermKind>> term_of(nr);
      for (std::size_t k = 0; k < nr; ++k) {
        const auto passes = reduction_passes(p.nodes[level.reductions[k]]->op);
        if (round < passes.size()) term_of[k] = passes[round];
      }
      // partial[task][k]: the round's term of reduction k over the task's
      // outputs and part.
      std::vector<std::vector<Partials>> partial(std::size_t(out_tiles.size() * splits));
      parallel_for(out_tiles.size() * splits, [&](std::int64_t task) {
        const Box tile = out_tiles.box(task / splits);
        const std::int64_t split = task % splits;
        const std::int64_t first = split * parts.size() / splits;
        const std::int64_t last = (split + 1) * parts.size() / splits;
        auto& states = partial[std::size_t(task)];
        std::vector<std::optional<Value>> centres(nr);
        for (std::size_t k = 0; k < nr; ++k) {
          const std::optional<TermKind>& term = term_of[k];
          const DType ctype = compute_type(p.nodes[inputs[k]]->dtype);
          states.push_back(start_term(term.value_or(TermKind::sum), ctype, numel(tile.shape())));
          if (term && centres_of[k]) centres[k] = load(sub_array(*centres_of[k], tile));
        }
        for (std::int64_t c = first; c < last; ++c) {
          const Box part = parts.box(c);
          std::int64_t first_index = 0;
          for (int a : s.axes) first_index += part.lo[a] * reduced_strides[a];
          BlockEvaluator block(p, known, join(tile, part, s.axes));
          block.compute(nodes);
          for (std::size_t k = 0; k < nr; ++k) {
            if (!term_of[k]) continue;
            accumulate(states[k], block.value(inputs[k]), s.axes, first_index,
                       centres[k] ? &*centres[k] : nullptr);
          }
        }
      });
      parallel_for(out_tiles.size(), [&](std::int64_t t) {
        for (std::size_t k = 0; k < nr; ++k) {
          if (!term_of[k]) continue;
          Partials& total = partial[std::size_t(t * splits)][k];
          for (std::int64_t split = 1; split < splits; ++split) {
            combine(total, partial[std::size_t(t * splits + split)][k]);
          }
          terms[std::size_t(t)][k].push_back(std::move(total));
        }
      });
      for (std::size_t k = 0; k < nr; ++k) {
        const auto passes = reduction_passes(p.nodes[level.reductions[k]]->op);
        if (round + 1 >= passes.size()) continue;
        const DType ctype = compute_type(p.nodes[inputs[k]]->dtype);
        Array& centre = centres_of[k].emplace(host_array(ctype, out_shape));
        parallel_for(out_tiles.size(), [&](std::int64_t t) {
          const Box tile = out_tiles.box(t);
          store(centres(terms[std::size_t(t)][k].back(), passes[round + 1], reduced, tile.shape()),
                sub_array(centre, tile));
        });
      }
    }
    std::vector<Array> results;
    for (int r : level.reductions) {
      const DType t = compute_type(p.nodes[r]->dtype);
      results.push_back(host_array(t, out_shape));
    }
    parallel_for(out_tiles.size(), [&](std::int64_t t) {
      const Box tile = out_tiles.box(t);
      for (std::size_t k = 0; k < nr; ++k) {
        const Node& n = *p.nodes[level.reductions[k]];
        store(finish(n.op, terms[std::size_t(t)][k], reduced, n.ddof, tile.shape(),
                     results[k].dtype()),
              sub_array(results[k], tile));
      }
    });
    for (std::size_t k = 0; k < nr; ++k) known[level.reductions[k]] = results[k];
  }
  // The consumers, by the shape they write: the domain's, or the outputs'.
  std::vector<Shape> shapes;
  for (const Write& w : writes) {
    const Shape& sh = p.nodes[w.node]->shape;
    if (std::find(shapes.begin(), shapes.end(), sh) == shapes.end()) shapes.push_back(sh);
  }
  for (const Shape& sh : shapes) {
    std::vector<Write> group;
    for (const Write& w : writes) {
      if (p.nodes[w.node]->shape == sh) group.push_back(w);
    }
    run_fused(p, producers, group, sh, known);
  }
}

}  // namespace nf::cpu
