// Streamed rows: each pass reads an output's elements from memory again,
// whole vectors at a time where rows are contiguous, the threads of the
// output striding over its groups. What takes outputs too long to hold;
// split rows build on it.
#pragma once

#include "codegen/reduce_walk.hpp"

namespace nf::jit {

class StreamedRows : public ReduceWalk {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override;
};

}  // namespace nf::jit
