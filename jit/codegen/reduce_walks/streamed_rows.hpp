// Streamed rows: each pass reads an output's elements from memory again,
// whole vectors at a time where rows are contiguous, the threads of the
// output striding over its groups, every other pass backwards. What takes
// outputs too long to hold; split rows build on it.
#pragma once

#include <string>

#include "codegen/reduce_walk.hpp"

namespace nf::jit {

class StreamedRows : public ReduceWalk {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override;
  void header(const ReduceKernel& k, SourceWriter& w) const override;
  void element_loop(const ReduceKernel& k, SourceWriter& w, const ElementPass& pass) const override;

 protected:
  // The groups g the threads of an output take: from `base` (empty: 0)
  // to before `end`.
  struct GroupRange {
    std::string base, end;
  };
  virtual GroupRange group_range(const ReduceKernel& k) const;
};

}  // namespace nf::jit
