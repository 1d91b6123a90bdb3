// Split rows: outputs of too many elements to hold, too few to fill a
// device, are split into `chunks` of `chunk` groups each, a block per chunk,
// and each pass becomes a kernel: blocks write their partial results to a
// workspace, and the next kernel combines them in a fixed order before its
// own pass; a last kernel makes the stores.
#include <algorithm>

#include "codegen/reduce_kernel.hpp"
#include "codegen/reduce_walks/streamed_rows.hpp"
#include "codegen/source_writer.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr std::int64_t kMaxChunks = 4096;

class SplitRows final : public StreamedRows {
 public:
  // Outputs not held (held rows come first in reduce_walks()) are split
  // where their blocks, a split's, are too few to fill a device: the lanes
  // say into how many chunks.
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    ReduceSpec split = spec;
    split.run_lanes = false;  // a chunk is a range of an output's groups in order
    const ReduceLanes& lanes = lanes_of(split);
    lanes.split_block(split);
    const std::int64_t blocks = (thread_outputs(split) + split.to - 1) / split.to;
    split.chunks = std::min(lanes.split_chunks(split, blocks, limits), kMaxChunks);
    if (split.chunks < 2) return false;
    split.chunk = (groups_of(split) + split.chunks - 1) / split.chunks;
    // Rows in L2 gain nothing from reverse order.
    split.reverse = limits.l2_bytes > 0 && read_bytes(split) > limits.l2_bytes;
    split.last_first = split.reverse && split.step->read_again;
    spec = std::move(split);
    return true;
  }

  // The last kernel reads the elements again for its stores, in the
  // reduction's order: an elementwise kernel reads them faster where they
  // lie across columns, over several reduced dims, or in rows of 1- and
  // 2-byte elements read one at a time. x - mean(x, (0, 1)) of (323, 323,
  // 323) halves ran 145 us split, 82 as a reduction and an elementwise
  // kernel; over axis 0 of (4194304, 8) halves, 91 against 78; over every
  // axis of (5793, 5793) halves, 83 against 78. Rows of vectors stay: over
  // axis 1 of (8, 4194304) halves, 69 against 72 us (H100,
  // bench/RESULTS.md, 2026-11-27).
  bool stores_apart(const ReduceSpec& spec) const override {
    return spec.columns || spec.reduced.size() > 1 || (spec.vec == 1 && narrowest_read(spec) < 4);
  }

  // A kernel per pass, then one for the stores.
  int stages(const ReduceModel& m) const override { return m.rounds() + 1; }

  void launch(const ReduceKernel& k, GeneratedKernel& out) const override {
    StreamedRows::launch(k, out);
    const ReduceSpec& s = k.spec();
    if (chunked(k)) out.blocks *= s.chunks;
    for (const Term& t : k.model().terms()) {
      out.workspace_bytes.push_back(k.model().acc_bytes(t) * numel(s.kept) * s.chunks);
    }
  }

  void header(const ReduceKernel& k, SourceWriter& w) const override {
    w.raw("//\n// Kernel " + std::to_string(k.stage()) + " of " + std::to_string(k.kernels()) +
          " of a reduction whose outputs have too many elements for one\n"
          "// block each: a block takes a chunk of `chunk` groups of " +
          std::to_string(k.spec().vec) +
          " element(s) of its\n// outputs. Kernel k combines the partial results of the "
          "passes before it,\n// then writes its chunk's partial result of pass k; the last "
          "kernel writes\n// the outputs. The blocks of a chunk's tiles run together: "
          "they share the\n// lines of memory where rows are not whole tiles.\n" +
          "// Chunk c's partial result of output o lies at [" + partial(k, "c") + "]: " +
          (k.spec().columns ? "a warp's threads take\n// consecutive outputs.\n"
                            : "a row's threads take\n// consecutive chunks.\n") +
          (k.spec().last_first
               ? "// Odd kernels take the chunks in reverse order: the step after reads\n"
                 "// them again from the first, which L2 then holds; even ones from\n"
                 "// those the kernel before read last.\n"
           : k.spec().reverse ? "// Even kernels take the chunks in reverse order, from those the "
                                "kernel\n// before read last, which L2 holds.\n"
                              : ""));
  }

  // The chunk count and size, and a workspace per term.
  void parameters(const ReduceKernel& k, KernelParams& p) const override {
    p.extent("chunks", {k.spec().chunks}, false);
    p.extent("chunk", {k.spec().chunk}, false);
    const std::vector<Term>& terms = k.model().terms();
    for (std::size_t t = 0; t < terms.size(); ++t) {
      p.add(k.model().acc_type(terms[t]) + "* __restrict__ ws" + std::to_string(t),
            {KernelParam::Kind::workspace, int(t)});
    }
  }

  // A block takes chunk blockIdx.x / tiles of the outputs of tile
  // blockIdx.x % tiles, or, in a last kernel that writes values per output
  // alone, tile blockIdx.x.
  void prologue(const ReduceKernel& k, SourceWriter& w) const override {
    if (!chunked(k)) {
      output_line(k, w, "(nf_idx)blockIdx.x");
      w.line("const bool live = o < rows;  // a block per tile: it writes values per output alone");
      return;
    }
    // Every other kernel of a reverse split takes the blocks in reverse
    // order: the chunks the kernel before read last are the ones L2 holds.
    const bool reverse = reversed(k);
    if (reverse) w.line("const nf_idx b = (nf_idx)(gridDim.x - 1 - blockIdx.x);  // in reverse");
    const std::string b = reverse ? "b" : "(nf_idx)blockIdx.x";
    w.line("const nf_idx tiles = (nf_idx)gridDim.x / chunks;");
    output_line(k, w, "(" + b + " % tiles)");
    w.line("const nf_idx c = " + b + " / tiles;");
    w.line("const bool live = o < rows;");
    w.line("const nf_idx g0 = c * chunk;");
    w.line("const nf_idx g1 = groups - g0 < chunk ? groups : g0 + chunk;");
  }

  // Passes before the kernel's own come from the chunks' partial results;
  // the kernel stops after its own pass.
  void passes(const ReduceKernel& k, SourceWriter& w) const override {
    for (int round = 1; round <= k.model().rounds(); ++round) {
      if (round == k.stage()) {
        k.pass(w, round, false);
        write_partials(k, w, round);
        return;
      }
      gather(k, w, round);
      k.model().per_output_values(w, round);
    }
    k.stores(w);
  }

  std::string store_guard(const ReduceKernel& k) const override {
    return chunked(k) ? "live && c == 0" : "live";
  }

 protected:
  GroupRange group_range(const ReduceKernel&) const override { return {"g0", "g1"}; }

 private:
  // Whether kernel k takes the blocks in reverse order: every other kernel
  // of a reverse split, the even ones, or the odd ones where the step after
  // reads the elements again.
  static bool reversed(const ReduceKernel& k) {
    return k.spec().reverse && (k.stage() % 2 == 0) != k.spec().last_first;
  }

  // Whether kernel k's blocks take chunks: each pass's do, and the last's
  // where it writes elements; where it writes values per output alone, a
  // block per tile gathers the partial results once, where a block per
  // chunk would each gather them all again.
  static bool chunked(const ReduceKernel& k) {
    return k.stage() < k.kernels() || writes_elements(k.spec());
  }

  // A split row's pass `round`, from the partial results its chunks wrote:
  // each thread combines some in chunk order, then the block combines those.
  static void gather(const ReduceKernel& k, SourceWriter& w, int round) {
    const ReduceModel& m = k.model();
    w.line("// pass " + std::to_string(round) + ", from every chunk's partial result");
    for (const Term& t : m.terms()) {
      if (t.round != round) continue;
      const std::string ws = "ws" + t.name.substr(1);
      const auto gathered = [&](const Term& into, const std::string& at) {
        w.line(m.acc_type(t) + " " + into.name + " = " + m.identity(t) + ";");
        w.line("for (nf_idx j = tr; live && j < chunks; j += " + std::to_string(k.spec().tr) +
               ") " + into.name + " = " + m.combine_op(t) + "(" + into.name + ", " + ws + "[" + at +
               "]);");
      };
      gathered(t, partial(k, "j"));
      if (const Term* next = k.twin(t)) gathered(*next, partial(k, "j") + " + 1");
    }
    k.combine(w, round, true);
  }

  // A split row's pass `round` ends with each chunk's partial result.
  static void write_partials(const ReduceKernel& k, SourceWriter& w, int round) {
    for (const Term& t : k.model().terms()) {
      if (t.round != round) continue;
      const std::string store =
          "if (live && tr == 0) ws" + t.name.substr(1) + "[" + partial(k, "c");
      w.line(store + "] = " + t.name + ";");
      if (const Term* next = k.twin(t)) w.line(store + " + 1] = " + next->name + ";");
    }
  }

  // Where output o's partial result of chunk `chunk` lies: next to the
  // output's other chunks where a row's threads take them (consecutive
  // threads, consecutive chunks), next to the other outputs' of the same
  // chunk in columns (consecutive threads, consecutive outputs), so that a
  // warp's reads and writes of them are coalesced either way.
  static std::string partial(const ReduceKernel& k, const std::string& chunk) {
    return k.spec().columns ? chunk + " * rows + o" : "o * chunks + " + chunk;
  }
};

}  // namespace

const ReduceWalk& split_rows_walk() {
  static const SplitRows walk;
  return walk;
}

}  // namespace nf::jit
