// What a walk does unless it says otherwise, and the order the walks are
// asked in.
#include "codegen/reduce_walk.hpp"

#include "codegen/reduce_kernel.hpp"
#include "codegen/source_writer.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {

// x - mean(x, (0, 2)) of (323, 323, 323) halves: 112 us in one kernel, 95
// in two; of (64, 64, 64, 64) floats over (0, 3), 63 us in one, 87 in two
// (H100, bench/RESULTS.md, 2026-11-27).
bool ReduceWalk::stores_apart(const ReduceSpec& spec) const {
  return !spec.columns && spec.reduced.size() > 1 && spec.vec == 1 && narrowest_read(spec) < 4;
}

int ReduceWalk::stages(const ReduceModel&) const {
  return 0;
}

// A block for each `to` outputs (or pairs of them).
void ReduceWalk::launch(const ReduceKernel& k, GeneratedKernel& out) const {
  const ReduceSpec& s = k.spec();
  out.threads = s.tr * s.to;
  out.blocks = (thread_outputs(s) + s.to - 1) / s.to;
}

void ReduceWalk::parameters(const ReduceKernel&, KernelParams&) const {}

std::string ReduceWalk::attributes(const ReduceKernel& k) const {
  return "__launch_bounds__(" + std::to_string(k.spec().tr * k.spec().to) + ") ";
}

// Two buffers for the partial results that meet (ReduceKernel::combine).
int ReduceWalk::slots(const ReduceKernel& k) const {
  return 2 * k.lanes().block_slots(k.spec());
}

void ReduceWalk::shared(const ReduceKernel&, SourceWriter&) const {}

void ReduceWalk::block(const ReduceKernel& k, SourceWriter& w) const {
  k.outputs(w);
}

void ReduceWalk::prologue(const ReduceKernel& k, SourceWriter& w) const {
  output_line(k, w, "(nf_idx)blockIdx.x");
  w.line("const bool live = o < rows;");
}

void ReduceWalk::loads(const ReduceKernel&, SourceWriter&) const {}

void ReduceWalk::passes(const ReduceKernel& k, SourceWriter& w) const {
  for (int round = 1; round <= k.model().rounds(); ++round) {
    k.pass(w, round, true);
    k.model().per_output_values(w, round);
  }
  k.stores(w);
}

void ReduceWalk::meet(const ReduceKernel& k, SourceWriter& w, const std::string& value,
                      const std::string& op, const std::string& buffer) const {
  w.line(value + " = " + k.lanes().allreduce(k.spec()) + "(" + value + ", " + op + ", " + buffer +
         ");");
}

std::string ReduceWalk::store_guard(const ReduceKernel&) const {
  return "live";
}

void ReduceWalk::output_line(const ReduceKernel& k, SourceWriter& w, const std::string& tile) {
  w.line("const nf_idx o = " + k.lanes().output(k.spec(), tile) + ";");
}

void ReduceWalk::cluster_prologue(const ReduceKernel& k, SourceWriter& w) {
  const std::string K = std::to_string(k.spec().cluster);
  output_line(k, w, "((nf_idx)blockIdx.x / " + K + ")");
  w.line("const nf_idx c = (nf_idx)blockIdx.x % " + K + ";  // the block's rank in its cluster");
  w.line("const bool live = o < rows;");
  w.line("const nf_idx g0 = c * " + std::to_string(k.spec().tr * k.spec().per) + ";");
}

std::string ReduceWalk::cluster_dims(int cluster) {
  return "__cluster_dims__(" + std::to_string(cluster) + ", 1, 1) ";
}

void ReduceWalk::block_header(const ReduceKernel& k, SourceWriter& w, const std::string& how) {
  w.raw("//\n// Each output element (a row, or a column) is reduced by " +
        std::to_string(k.spec().tr) + " threads; a block\n// takes " + std::to_string(k.spec().to) +
        " outputs. " + how);
}

void ReduceWalk::shared_reads(const ReduceKernel& k, SourceWriter& w, const std::string& array,
                              int per) {
  const ReduceSpec& s = k.spec();
  w.line("NF_DYNAMIC_SHARED(" + array + ");");
  std::int64_t offset = 0;
  for (int j : varying_reads(s)) {
    const std::string vt = held_in_words(s, j) ? "unsigned int"
                           : s.staged          ? "unsigned char"
                                               : k.model().vec_type(s.reads[j].dtype);
    w.line(vt + "* const s_in" + std::to_string(j) + " = (" + vt + "*)(" + array + " + " +
           std::to_string(offset) + ");");
    offset += held_bytes(s, j, per);
  }
}

// The order is the preference: a cluster takes rows too long for one block
// to hold, which it reads once where streaming would read them each pass;
// prefetched rows are held rows that also prefetch, so they come before
// plain held rows; columns too long to hold in registers but read more than
// once are held in shared memory; a split takes outputs not held whose
// blocks are too few to fill a device; streaming takes the rest.
const std::vector<const ReduceWalk*>& reduce_walks() {
  static const std::vector<const ReduceWalk*> walks = {
      &cluster_rows_walk(),   &prefetched_rows_walk(), &held_rows_walk(),
      &shared_columns_walk(), &split_rows_walk(),      &streamed_rows_walk(),
  };
  return walks;
}

}  // namespace nf::jit
