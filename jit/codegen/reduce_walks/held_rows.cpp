#include "codegen/reduce_walks/held_rows.hpp"

#include <algorithm>

#include "codegen/reduce_lanes.hpp"

namespace nf::jit {

bool HeldRows::hold(ReduceSpec& spec, const ReduceLimits& limits) {
  const std::int64_t held = (groups_of(spec) + spec.tr - 1) / spec.tr;
  if (held > limits.max_held) return false;
  spec.per = int(std::max<std::int64_t>(held, 1));
  spec.whole = lanes_of(spec).whole(spec);
  return true;
}

bool HeldRows::applies(ReduceSpec& spec, const ReduceLimits& limits) const {
  return hold(spec, limits);
}

const ReduceWalk& held_rows_walk() {
  static const HeldRows walk;
  return walk;
}

}  // namespace nf::jit
