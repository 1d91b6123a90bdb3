// A reduction walk: how the threads of a kernel cover the elements of its
// outputs across passes (held in registers, read again each pass, split
// across blocks, shared by a cluster, prefetched a tile ahead). Each walk is
// a unit of its own: when it applies and its launch shape, and the parts of
// the kernel it emits through a SourceWriter around the parts every walk
// shares, which the driver (ReduceKernel, reduce_codegen.cpp) puts together
// from the model (reduce_model.hpp).
//
// How threads map to outputs, along rows or along columns, is the lanes'
// part (reduce_lanes.hpp), not a walk: held, streamed and split walks each
// take either.
//
// A new walk is a file under reduce_walks/, its line below and its place in
// reduce_walks(); CONTRIBUTING.md, "Adding a kernel walk".
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "codegen/reduce_spec.hpp"

namespace nf::jit {

class ReduceKernel;
class ReduceModel;
class SourceWriter;
struct ElementPass;
struct KernelParams;
struct Term;

class ReduceWalk {
 public:
  virtual ~ReduceWalk() = default;

  // Whether the walk takes a step shaped as `spec`, whose lanes have set
  // columns, vec, tr and to; if so, sets its launch shape there (tr, to,
  // per, chunks and chunk, cluster, prefetch, whole). A walk that does not
  // apply leaves `spec` as it was.
  virtual bool applies(ReduceSpec& spec, const ReduceLimits& limits) const = 0;
  // Whether a step it took that writes elements (a reduction broadcast
  // back) runs faster cut in two (kernel_schedule, step_kernels.hpp): the
  // reductions alone, written to memory, then an elementwise kernel that
  // reads them back. By default, rows of 1- and 2-byte elements over
  // several reduced dims, read an element at a time.
  virtual bool stores_apart(const ReduceSpec& spec) const;

  // The kernels of a step: 0 for one kernel that makes every pass and the
  // stores; n for one kernel per stage, 1 to n.
  virtual int stages(const ReduceModel& m) const;
  // The launch: blocks, threads, cluster, shared memory, tiles, workspaces.
  virtual void launch(const ReduceKernel& k, GeneratedKernel& out) const;

  // The kernel's comment: how its threads cover its outputs.
  virtual void header(const ReduceKernel& k, SourceWriter& w) const = 0;
  // Parameters of its own, after the sizes `rows` and `n`.
  virtual void parameters(const ReduceKernel& k, KernelParams& p) const;
  // What the declaration says before the kernel's name: launch bounds.
  virtual std::string attributes(const ReduceKernel& k) const;
  // Slots of nf_smem (ReduceKernel::slot_bytes each), and shared memory of
  // its own.
  virtual int slots(const ReduceKernel& k) const;
  virtual void shared(const ReduceKernel& k, SourceWriter& w) const;
  // The block's work on its outputs (ReduceKernel::outputs): once, or once
  // a tile.
  virtual void block(const ReduceKernel& k, SourceWriter& w) const;
  // The block prologue: the thread's output o and whether it is `live`, and
  // where blocks share an output, the block's rank c and its groups g0...
  virtual void prologue(const ReduceKernel& k, SourceWriter& w) const;
  // Loads into registers before the first pass.
  virtual void loads(const ReduceKernel& k, SourceWriter& w) const;
  // The passes and the stores.
  virtual void passes(const ReduceKernel& k, SourceWriter& w) const;
  // A walk over the thread's elements: the pass's body at each element r.
  virtual void element_loop(const ReduceKernel& k, SourceWriter& w,
                            const ElementPass& pass) const = 0;
  // How the partial results in `value` meet, combined by `op`, `buffer`
  // the block's shared memory for them: over the threads that share an
  // output (the lanes), and beyond.
  virtual void meet(const ReduceKernel& k, SourceWriter& w, const std::string& value,
                    const std::string& op, const std::string& buffer) const;
  // Which threads store the values per output (with tr == 0), and take a
  // shifted row's ends (ReduceKernel::row_ends).
  virtual std::string store_guard(const ReduceKernel& k) const;

 protected:
  // The thread's output in tile `tile`, as the lanes map threads.
  static void output_line(const ReduceKernel& k, SourceWriter& w, const std::string& tile);
  // The prologue of a block of a cluster of spec().cluster blocks that share
  // each output: the block's rank c, and g0, the first of its tr * per groups.
  static void cluster_prologue(const ReduceKernel& k, SourceWriter& w);
  // The attribute that launches blocks in clusters of `cluster`.
  static std::string cluster_dims(int cluster);
  // The header of a block that takes `to` outputs, before `how` it holds them.
  static void block_header(const ReduceKernel& k, SourceWriter& w, const std::string& how);
  // Dynamic shared memory `array`, and in it, one after another, an array
  // s_in<j> of `per` groups of each of the block's threads for each read j
  // that varies along the reduced dims (held_bytes in all).
  static void shared_reads(const ReduceKernel& k, SourceWriter& w, const std::string& array,
                           int per);
};

// The walks, one file each under reduce_walks/.
const ReduceWalk& cluster_rows_walk();
const ReduceWalk& prefetched_rows_walk();
const ReduceWalk& held_rows_walk();
const ReduceWalk& shared_columns_walk();
const ReduceWalk& split_rows_walk();
const ReduceWalk& streamed_rows_walk();

// The walks in the order make_reduce_spec asks them: the first that applies
// takes the step. The last applies to every step.
const std::vector<const ReduceWalk*>& reduce_walks();

}  // namespace nf::jit
