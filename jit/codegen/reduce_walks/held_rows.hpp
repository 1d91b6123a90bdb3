// Held rows: each thread holds its share of an output's groups in registers,
// loaded once before the first pass, so that every pass after the first
// reads no memory. The walks that hold a share too (a cluster's, a
// prefetched tile's) build on this one.
#pragma once

#include <string>

#include "codegen/reduce_walk.hpp"

namespace nf::jit {

class HeldRows : public ReduceWalk {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override;
  void header(const ReduceKernel& k, SourceWriter& w) const override;
  void loads(const ReduceKernel& k, SourceWriter& w) const override;
  void element_loop(const ReduceKernel& k, SourceWriter& w, const ElementPass& pass) const override;

 protected:
  // Each thread holds its share of an output's groups where the share is at
  // most held_groups_at_most: sets per and whole.
  static bool hold(ReduceSpec& spec, const ReduceLimits& limits);
  // Whether the thread's held group g lies in its row, `live` its row's.
  static std::string guard(const ReduceSpec& spec, const std::string& live);
  // Opens the loop over the thread's held groups k (group g) and the test
  // that g lies in its row, `live` its row's; two close()s end them.
  void open_groups(const ReduceKernel& k, SourceWriter& w, const std::string& live) const;

  // Where the thread's groups start in its output, as a prefix of its index.
  virtual std::string first_group(const ReduceKernel& k) const;
  // The statement that loads read j's group g into v_in<j>[k].
  virtual std::string load(const ReduceKernel& k, int j) const;
  // Around the loads, where they need more (prefetched tiles).
  virtual void before_loads(const ReduceKernel& k, SourceWriter& w) const;
  virtual void after_loads(const ReduceKernel& k, SourceWriter& w) const;
};

}  // namespace nf::jit
