// The order the walks are asked in.
#include "codegen/reduce_walk.hpp"

namespace nf::jit {

// The order is the preference: a cluster takes rows too long for one block
// to hold, which it reads once where streaming would read them each pass;
// prefetched rows are held rows that also prefetch, so they come before
// plain held rows; a split takes outputs not held whose blocks are too few
// to fill a device; streaming takes the rest.
const std::vector<const ReduceWalk*>& reduce_walks() {
  static const std::vector<const ReduceWalk*> walks = {
      &cluster_rows_walk(), &prefetched_rows_walk(), &held_rows_walk(),
      &split_rows_walk(),   &streamed_rows_walk(),
  };
  return walks;
}

}  // namespace nf::jit
