// A reduction walk: how the threads of a kernel cover the elements of its
// outputs across passes (held in registers, read again each pass, split
// across blocks, shared by a cluster, prefetched a tile ahead). Each walk is
// a unit of its own that says when it applies and sets its launch shape.
//
// How threads map to outputs, along rows or along columns, is the lanes'
// part (reduce_lanes.hpp), not a walk: held, streamed and split walks each
// take either.
#pragma once

#include <vector>

#include "codegen/reduce_spec.hpp"

namespace nf::jit {

class ReduceWalk {
 public:
  virtual ~ReduceWalk() = default;

  // Whether the walk takes a step shaped as `spec`, whose lanes have set
  // columns, vec, tr and to; if so, sets its launch shape there (tr, to,
  // per, chunks and chunk, cluster, prefetch, whole). A walk that does not
  // apply leaves `spec` as it was.
  virtual bool applies(ReduceSpec& spec, const ReduceLimits& limits) const = 0;
};

// The walks, one file each under reduce_walks/.
const ReduceWalk& cluster_rows_walk();
const ReduceWalk& prefetched_rows_walk();
const ReduceWalk& held_rows_walk();
const ReduceWalk& split_rows_walk();
const ReduceWalk& streamed_rows_walk();

// The walks in the order make_reduce_spec asks them: the first that applies
// takes the step. The last applies to every step.
const std::vector<const ReduceWalk*>& reduce_walks();

}  // namespace nf::jit
