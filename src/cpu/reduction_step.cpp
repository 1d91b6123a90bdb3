// Reduction steps. Where a block can hold the whole reduced extent of its
// outputs (rows of a layer norm), each block reduces its rows and computes
// the consumers that broadcast the results back in the same visit: one read
// of the data. Otherwise (a full sum, long rows, columns) the reduced extent
// is cut too: tasks of (outputs, part of the reduced extent) accumulate
// partial results, the parts combine in a fixed order, and the consumers run
// in a pass of their own. A reduction of two passes (logsumexp: the maximum,
// then the exponentials of the deviations from it) reads its elements once
// per pass, as a split kernel does; var takes its deviations from the mean
// of each output's first few elements, in one pass. The parts depend on the
// shape alone, so results do not depend on the number of threads.
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
// Where the reduced axes are not the innermost (columns), a block's rows are
// runs of consecutive outputs: the kept axes inside the innermost reduced one
// (their run), cut into pieces of at most this many. A block of a whole
// short run takes as many reduced elements as fit kBlockElements, so that
// it reads one span of memory where the reduced axes lie just outside the
// run. Runs of 1024 outputs a block (4 KB of f32, 16 of them 1 MiB apart
// for sum over axis 0 of (64, 257, 1021)) took that sum 1.9 times numpy's
// time on the 2-core EPYC development machine, and tiles of 1024 outputs
// across kept axes (43 outputs of 127 in sum over (1, 2) of (43, 61, 37,
// 127)) read runs of 8 KB 1 MiB apart; runs of 16384 and one run of the
// kept axes a block took them 0.35-0.78 of that time (bench/probes/
// column_tiles.cpp, bench/RESULTS.md), and the sums over axis 1 and (0, 1),
// whose runs are whole already, as long as before.
constexpr std::int64_t kColumnRun = 16384;
// The fewest reduced elements a block of a long run takes (a block is then
// up to this many times kBlockElements): a block of 16384 outputs by one
// element sent a sum over axis 0 of (3, 5000011) through partials of every
// output, 2.1 times the time of taking its three elements whole.
constexpr std::int64_t kColumnLeastReduced = 4;
// The fewest elements of each output a block of a reduction over axes apart
// from each other takes (apart_of).
constexpr std::int64_t kApartReduced = 1024;

// A reduction over the innermost axis and others apart from it (sum over
// (0, 2) of (A, B, C)): the elements of its innermost run of reduced axes
// (C), and its outputs along the kept axes inside the outermost reduced one
// (B); 1 where the reduced axes lie together.
struct Apart {
  std::int64_t run = 1, between = 1;
};

Apart apart_of(const Shape& domain, const std::vector<int>& axes) {
  Apart a;
  const auto reduced = [&](int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
  bool in_run = true;
  const int outermost = *std::min_element(axes.begin(), axes.end());
  for (int d = int(domain.size()) - 1; d >= outermost; --d) {
    if (reduced(d)) {
      if (in_run) a.run *= domain[d];
    } else if (domain[d] > 1) {
      in_run = false;
      a.between *= domain[d];
    }
  }
  return a;
}

// A block of the outputs widened by a block of the reduced extent.
Box join(Box outputs, const Box& reduced, const std::vector<int>& axes) {
  for (int a : axes) {
    outputs.lo[a] = reduced.lo[a];
    outputs.hi[a] = reduced.hi[a];
  }
  return outputs;
}

// Reduction op's terms by pass over elements cut into parts: a term that
// deviates from the mean of its output's first elements shares the pass of
// the term before it (centred_on_first), so that var reads its elements once.
std::vector<std::vector<TermKind>> cut_passes(OpId op) {
  std::vector<std::vector<TermKind>> passes;
  for (TermKind k : reduction_passes(op)) {
    if (passes.empty() || !centred_on_first(k, false)) passes.emplace_back();
    passes.back().push_back(k);
  }
  return passes;
}

// Each output's mean of its first kCentreElements elements along the
// reduced axes, in C order, summed one after another as the kernels do: the
// centre of one-pass deviations (centred_on_first). `nodes` compute `input`.
Value centres_of_firsts(const Program& p, const Memory& known, const std::vector<int>& nodes,
                        int input, const Box& tile, const Shape& reduced_shape,
                        const std::vector<int>& axes) {
  const std::int64_t firsts = std::min<std::int64_t>(numel(reduced_shape), kCentreElements);
  const DType ctype = compute_type(p.nodes[input]->dtype);
  Partials sum = start_term(TermKind::sum, ctype, numel(tile.shape()));
  for (std::int64_t r = 0; r < firsts; ++r) {
    Box element = tile;
    std::int64_t rest = r;
    for (int a = int(reduced_shape.size()) - 1; a >= 0; --a) {
      if (reduced_shape[a] == 1) continue;
      element.lo[a] = rest % reduced_shape[a];
      element.hi[a] = element.lo[a] + 1;
      rest /= reduced_shape[a];
    }
    BlockEvaluator block(p, known, element);
    block.compute(nodes);
    accumulate(sum, block.value(input), axes, r);
  }
  return centres(sum, TermKind::moments, std::max<std::int64_t>(firsts, 1), tile.shape());
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
    // Where kept axes lie between reduced ones, a block takes several of
    // their outputs, each with a run or more and kApartReduced elements at
    // the least, so that it reads spans of memory (rows of C for several B
    // together) rather than one run every B * C elements, and each output
    // still has enough elements to amortise its own cost (a block of one run
    // of 10 halves an output ran slower than one output alone).
    const Apart apart = apart_of(domain, s.axes);
    if (apart.between > per_output) {
      const std::int64_t least = std::max(apart.run, kApartReduced);
      per_output = std::clamp<std::int64_t>(kBlockElements / least, 1, apart.between);
      per_reduced = std::max<std::int64_t>(1, kBlockElements / per_output);
    }
  } else {
    // The run: the kept axes inside the innermost reduced one.
    std::int64_t run = 1;
    for (int d = int(domain.size()) - 1; d >= 0 && reduced_shape[d] == 1; --d) run *= domain[d];
    const std::int64_t most = std::max<std::int64_t>(reduced, 1);
    per_output = std::min(run, kColumnRun);
    per_reduced = std::clamp<std::int64_t>(kBlockElements / per_output,
                                           std::min(most, kColumnLeastReduced), most);
    // All the reduced elements in one block: more runs a block, up to its size.
    if (per_reduced == most) per_output = std::max(per_output, kBlockElements / most);
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
    std::vector<std::vector<std::vector<TermKind>>> passes(nr);
    std::size_t rounds = 0;
    for (std::size_t k = 0; k < nr; ++k) {
      passes[k] = cut_passes(p.nodes[level.reductions[k]]->op);
      rounds = std::max(rounds, passes[k].size());
    }
    // terms[t][k]: reduction k's terms over tile t, in ops.def's order;
    // centres_of[k]: over all outputs, what its next pass deviates from.
    std::vector<std::vector<std::vector<Partials>>> terms(std::size_t(out_tiles.size()),
                                                          std::vector<std::vector<Partials>>(nr));
    std::vector<std::optional<Array>> centres_of(nr);
    for (std::size_t round = 0; round < rounds; ++round) {
      // The terms each reduction takes this round, if it has any.
      std::vector<std::vector<TermKind>> term_of(nr);
      for (std::size_t k = 0; k < nr; ++k) {
        if (round < passes[k].size()) term_of[k] = passes[k][round];
      }
      // partial[task][k]: the round's terms of reduction k over the task's
      // outputs and part.
      std::vector<std::vector<std::vector<Partials>>> partial(
          std::size_t(out_tiles.size() * splits), std::vector<std::vector<Partials>>(nr));
      parallel_for(out_tiles.size() * splits, [&](std::int64_t task) {
        const Box tile = out_tiles.box(task / splits);
        const std::int64_t split = task % splits;
        const std::int64_t first = split * parts.size() / splits;
        const std::int64_t last = (split + 1) * parts.size() / splits;
        auto& states = partial[std::size_t(task)];
        // Per reduction and term, what it deviates from: the pass before's
        // result, or the first elements of the tile's outputs.
        std::vector<std::vector<std::optional<Value>>> centres(nr);
        for (std::size_t k = 0; k < nr; ++k) {
          const DType ctype = compute_type(p.nodes[inputs[k]]->dtype);
          for (std::size_t j = 0; j < term_of[k].size(); ++j) {
            states[k].push_back(start_term(term_of[k][j], ctype, numel(tile.shape())));
            std::optional<Value>& centre = centres[k].emplace_back();
            if (j > 0) {  // a term sharing the pass before's: see cut_passes
              centre = centres_of_firsts(p, known, nodes, inputs[k], tile, reduced_shape, s.axes);
            } else if (centres_of[k]) {
              centre = load(sub_array(*centres_of[k], tile));
            }
          }
        }
        for (std::int64_t c = first; c < last; ++c) {
          const Box part = parts.box(c);
          std::int64_t first_index = 0;
          for (int a : s.axes) first_index += part.lo[a] * reduced_strides[a];
          BlockEvaluator block(p, known, join(tile, part, s.axes));
          block.compute(nodes);
          for (std::size_t k = 0; k < nr; ++k) {
            for (std::size_t j = 0; j < term_of[k].size(); ++j) {
              accumulate(states[k][j], block.value(inputs[k]), s.axes, first_index,
                         centres[k][j] ? &*centres[k][j] : nullptr);
            }
          }
        }
      });
      parallel_for(out_tiles.size(), [&](std::int64_t t) {
        for (std::size_t k = 0; k < nr; ++k) {
          for (std::size_t j = 0; j < term_of[k].size(); ++j) {
            Partials& total = partial[std::size_t(t * splits)][k][j];
            for (std::int64_t split = 1; split < splits; ++split) {
              combine(total, partial[std::size_t(t * splits + split)][k][j]);
            }
            terms[std::size_t(t)][k].push_back(std::move(total));
          }
        }
      });
      for (std::size_t k = 0; k < nr; ++k) {
        if (round + 1 >= passes[k].size()) continue;
        const DType ctype = compute_type(p.nodes[inputs[k]]->dtype);
        Array& centre = centres_of[k].emplace(host_array(ctype, out_shape));
        parallel_for(out_tiles.size(), [&](std::int64_t t) {
          const Box tile = out_tiles.box(t);
          store(centres(terms[std::size_t(t)][k].back(), passes[k][round + 1][0], reduced,
                        tile.shape()),
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
