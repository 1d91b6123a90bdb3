// Prefetched rows: held rows that fill an SM's registers, where each block
// loops over tiles of `to` outputs and copies the next tile's elements into
// shared memory (cp.async, sm_80 on) while it reduces the current one, so
// that its SM keeps reading memory.
#include <algorithm>
#include <vector>

#include "codegen/reduce_kernel.hpp"
#include "codegen/reduce_walks/held_rows.hpp"
#include "codegen/source_writer.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

// Held rows of `prefetch_from` bytes or more a block take an SM's registers,
// and the SM stops reading memory while its one block works on them. Where
// that work includes library functions on every element (softmax's exp and
// division), the block prefetches its next rows meanwhile; where it does
// not (layer norm), prefetching cost more than it saved (bench/RESULTS.md).
// Each vector is copied whole, so its bytes must be a size cp.async copies;
// the copies take no shift (ReduceSpec::shifted) and cover no runs
// (ReduceSpec::covered).
bool prefetches(const ReduceSpec& spec, const ReduceLimits& limits) {
  if (spec.columns || spec.vec == 1 || spec.shifted || spec.covered || limits.prefetch_from <= 0) {
    return false;
  }
  const std::int64_t elements = numel(spec.step->domain);
  const bool heavy = std::any_of(spec.step->nodes.begin(), spec.step->nodes.end(), [&](int i) {
    const Node& n = *spec.program->nodes[i];
    return numel(n.shape) == elements && is_library_function(n);
  });
  if (!heavy) return false;
  for (const ReduceOperand& r : spec.reads) {
    const std::size_t bytes = spec.vec * itemsize(r.dtype);
    if (r.along != Along::none && bytes != 4 && bytes != 8 && bytes != 16) return false;
  }
  // The next tile's elements: for each read that varies along the reduced
  // dims, its held groups.
  const std::int64_t bytes = held_bytes(spec, spec.per);
  return bytes >= limits.prefetch_from && bytes <= limits.prefetch_max;
}

class PrefetchedRows final : public HeldRows {
 public:
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    ReduceSpec held = spec;
    if (!hold(held, limits) || !prefetches(held, limits)) return false;
    spec = std::move(held);
    spec.prefetch = true;
    return true;
  }

  // As many blocks as tiles; a launch takes no more than the device runs at
  // once, each looping over its tiles.
  void launch(const ReduceKernel& k, GeneratedKernel& out) const override {
    HeldRows::launch(k, out);
    out.loops_over_tiles = true;
    out.shared_bytes = std::size_t(held_bytes(k.spec(), k.spec().per));
  }

  void header(const ReduceKernel& k, SourceWriter& w) const override {
    HeldRows::header(k, w);
    w.raw(
        "// A block loops over tiles of outputs, copying the next tile's elements\n"
        "// into shared memory while it works on the current one.\n");
  }

  // One slot of shared memory per group a thread holds, of each prefetched
  // read: group k at k * threads + threadIdx.x, so that a warp's copies fill
  // consecutive addresses. Each thread reads back only the slots it filled.
  void shared(const ReduceKernel& k, SourceWriter& w) const override {
    w.line("// the next tile's elements, copied in while the block works on this one");
    shared_reads(k, w, "nf_next", k.spec().per);
  }

  void block(const ReduceKernel& k, SourceWriter& w) const override {
    const std::string TO = std::to_string(k.spec().to);
    w.line("const nf_idx tiles = (rows + " + TO + " - 1) / " + TO + ";");
    fetch(k, w, "(nf_idx)blockIdx.x", "the block's first tile");
    w.open("for (nf_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x)");
    k.outputs(w);
    w.close();
  }

  // A tile of one output is the output; the loop keeps tile < tiles == rows.
  void prologue(const ReduceKernel& k, SourceWriter& w) const override {
    if (k.spec().to == 1) {
      w.line("const nf_idx o = tile;");
      w.line("const bool live = true;  // tile < tiles == rows");
      return;
    }
    output_line(k, w, "tile");
    w.line("const bool live = o < rows;");
  }

 protected:
  std::string load(const ReduceKernel& k, int j) const override {
    const std::string J = std::to_string(j);
    return "v_in" + J + "[k] = s_in" + J + "[" + slot(k) + "];";
  }

  void before_loads(const ReduceKernel&, SourceWriter& w) const override {
    w.line("nf_fetched();  // the tile's copies are in");
  }

  // A thread's copies overwrite only the slots it has just read, so the next
  // tile may start coming in at once: waiting for the block's slowest warp
  // cost softmax on 1024x32768 up to 2 points of copy bandwidth
  // (bench/RESULTS.md). The combinations take turns between two buffers,
  // which carry on across tiles when a tile makes an even number of them;
  // after an odd number, this tile's first would reuse the buffer the last
  // tile's last is still being read from, and a barrier keeps them apart.
  void after_loads(const ReduceKernel& k, SourceWriter& w) const override {
    const bool turns_carry_on = k.model().terms().size() % 2 == 0;
    if (!turns_carry_on) w.line("__syncthreads();");
    fetch(k, w, "(tile + (nf_idx)gridDim.x)", "the next tile");
  }

 private:
  static std::string slot(const ReduceKernel& k) {
    return "k * " + std::to_string(k.spec().tr * k.spec().to) + " + threadIdx.x";
  }

  // Starts copying the thread's groups of tile `tile` into its slots.
  void fetch(const ReduceKernel& k, SourceWriter& w, const std::string& tile,
             const std::string& what) const {
    const ReduceSpec& s = k.spec();
    w.open("", what + " starts coming into shared memory");
    output_line(k, w, tile);
    k.model().output_bases(w, varying_reads(s));
    open_groups(k, w, "o < rows");
    for (int j : varying_reads(s)) {
      const std::string J = std::to_string(j);
      w.line("nf_fetch<" + std::to_string(s.vec * itemsize(s.reads[j].dtype)) + ">(&s_in" + J +
             "[" + slot(k) + "], " + k.model().group_at(j, "g") + ");");
    }
    w.close();
    w.close();
    w.close();
  }
};

}  // namespace

const ReduceWalk& prefetched_rows_walk() {
  static const PrefetchedRows walk;
  return walk;
}

}  // namespace nf::jit
