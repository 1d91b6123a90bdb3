// Prefetched rows: held rows that fill an SM's registers, where each block
// loops over tiles of `to` outputs and copies the next tile's elements into
// shared memory (cp.async, sm_80 on) while it reduces the current one, so
// that its SM keeps reading memory.
#include <algorithm>

#include "codegen/reduce_walks/held_rows.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

// Held rows of `prefetch_from` bytes or more a block take an SM's registers,
// and the SM stops reading memory while its one block works on them. Where
// that work includes library functions on every element (softmax's exp and
// division), the block prefetches its next rows meanwhile; where it does
// not (layer norm), prefetching cost more than it saved (bench/RESULTS.md).
// Each vector is copied whole, so its bytes must be a size cp.async copies.
bool prefetches(const ReduceSpec& spec, const ReduceLimits& limits) {
  if (spec.columns || spec.vec == 1 || limits.prefetch_from <= 0) return false;
  const std::int64_t elements = numel(spec.step->domain);
  const bool heavy = std::any_of(spec.step->nodes.begin(), spec.step->nodes.end(), [&](int i) {
    const Node& n = *spec.program->nodes[i];
    return numel(n.shape) == elements && is_library_function(n);
  });
  if (!heavy) return false;
  for (const ReduceOperand& r : spec.reads) {
    const std::size_t bytes = spec.vec * itemsize(r.dtype);
    if (r.along != Along::none && bytes != 4 && bytes != 8 && bytes != 16) return false;
  }
  const std::int64_t bytes = prefetch_bytes(spec);
  return bytes >= limits.prefetch_from && bytes <= limits.prefetch_max;
}

class PrefetchedRows final : public HeldRows {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    ReduceSpec held = spec;
    if (!hold(held, limits) || !prefetches(held, limits)) return false;
    spec = std::move(held);
    spec.prefetch = true;
    return true;
  }
};

}  // namespace

const ReduceWalk& prefetched_rows_walk() {
  static const PrefetchedRows walk;
  return walk;
}

}  // namespace nf::jit
