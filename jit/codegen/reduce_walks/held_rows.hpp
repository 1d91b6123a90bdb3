// Held rows: each thread holds its share of an output's groups in registers,
// loaded once before the first pass, so that every pass after the first
// reads no memory. The walks that hold a share too (a cluster's, a
// prefetched tile's) build on this one.
#pragma once

#include "codegen/reduce_walk.hpp"

namespace nf::jit {

class HeldRows : public ReduceWalk {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override;

 protected:
  // Each thread holds its share of an output's groups where the share is at
  // most max_held groups: sets per and whole.
  static bool hold(ReduceSpec& spec, const ReduceLimits& limits);
};

}  // namespace nf::jit
