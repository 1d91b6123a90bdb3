// Streamed rows: each pass reads an output's elements from memory again,
// whole vectors at a time where rows are contiguous, the threads of the
// output striding over its groups. What takes outputs too long to hold;
// split rows build on it.
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
  // The head of the loop over the thread's groups g.
  virtual std::string group_loop(const ReduceKernel& k) const;
};

}  // namespace nf::jit
