// One kernel of a reduction step, as the driver (reduce_codegen.cpp) puts it
// together from the model and the walk: the parts every walk shares (the
// declaration, the block's work on its outputs, a pass, the meeting of its
// partial results, the stores), each asking the walk for its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "codegen/reduce_lanes.hpp"
#include "codegen/reduce_model.hpp"
#include "codegen/reduce_walk.hpp"

namespace nf::jit {

class SourceWriter;

// One walk over the elements of the thread's outputs: a pass, or the stores.
struct ElementPass {
  int stage;                       // the pass (1 to rounds) or the stores (rounds + 1)
  Closure values;                  // what it computes at each element
  std::string body;                // statements at element r, one a line
  bool stores = false;             // whether the body writes elements
  std::vector<int> vector_writes;  // writes stored as whole vectors, after each group
  std::string element_stores;      // the stores of `body`, an element at a time
};

class ReduceKernel {
 public:
  // `stage`: which of the walk's kernels (ReduceWalk::stages), from 1; 0 for
  // a walk of one kernel.
  ReduceKernel(const ReduceModel& model, int stage);

  GeneratedKernel run(bool with_source) const;

  const ReduceModel& model() const { return m_; }
  const ReduceSpec& spec() const { return m_.spec(); }
  const ReduceLanes& lanes() const { return lanes_; }
  int stage() const { return stage_; }
  int kernels() const { return kernels_; }  // of the step

  // Bytes of a slot of shared memory: one partial result of any term (every
  // accumulator of jit/runtime/nf_reduce.h fits in 16). The one place a
  // slot's size is set: nf_smem, its buffers and the cluster's slot follow.
  int slot_bytes() const { return 16; }
  // Bytes of one of the block's two buffers of partial results.
  int buffer_bytes() const { return lanes_.block_slots(spec()) * slot_bytes(); }

  // The block's work on its outputs: the prologue, the operands' bases, the
  // values per output, the loads, the passes and the stores.
  void outputs(SourceWriter& w) const;
  // Pass `round`: its accumulators, the walk over the elements, and their
  // meeting; `whole`: into the whole output's result.
  void pass(SourceWriter& w, int round, bool whole) const;
  void combine(SourceWriter& w, int round, bool whole) const;
  // The meetings of the terms of `round` (and of their twins): one term, or
  // two that meet as a pair.
  std::vector<std::vector<const Term*>> meetings(int round) const;
  // Columns of pairs (ReduceSpec::pairs): the accumulator of term t for the
  // pair's second output, o + 1; nullptr for other kernels.
  const Term* twin(const Term& t) const;
  // Where operand j's value for the pair's second output lies: `base` one
  // step along the innermost kept dim.
  std::string twin_base(int j) const;
  void stores(SourceWriter& w) const;
  // Inside a walk's element loop, at group g: the pass's values and body at
  // each element r of the group, read j's element being `read_at(j)`;
  // `addressed`: whether some operand is addressed at r.
  void element_body(SourceWriter& w, const ElementPass& pass,
                    const std::function<std::string(int)>& read_at, bool addressed) const;
  // After a walk's element loop: a shifted row's elements outside its
  // groups (ReduceSpec::shifted), the pass's values and body at each.
  void row_ends(SourceWriter& w, const ElementPass& pass) const;
  // Whether held rows hold a shifted row's ends too (a thread for each),
  // and the loads that do, after the groups'.
  bool holds_ends() const;
  void held_ends(SourceWriter& w) const;

 private:
  std::string text(KernelParams& params) const;
  // The rows that store values per output, operand j's at `base(j)`.
  std::vector<std::string> output_rows(const std::function<std::string(int)>& base) const;
  // Columns of pairs: each pass's body, for each output of the pair in a
  // scope of its own, its element read out of the word `w_in<j>`.
  void pair_bodies(SourceWriter& w, const ElementPass& pass,
                   const std::function<std::string(int)>& read_at, bool addressed) const;

  const ReduceModel& m_;
  const ReduceWalk& walk_;
  const ReduceLanes& lanes_;
  const int stage_;
  const int kernels_;
  std::vector<Term> twins_;  // of m_.terms(), one each where spec().pairs
  std::string signature_;
  std::string name_;
};

}  // namespace nf::jit
