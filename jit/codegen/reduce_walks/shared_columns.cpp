// Shared columns: columns that a kernel reads more than once (a reduction
// broadcast back, x - mean(x, 0)), too long to hold in registers, whose
// block's columns fit in shared memory. Each thread copies its elements of
// its column into shared memory (cp.async, sm_80 on), every copy in flight
// at once, and every pass reads them there: memory is read once, where the
// split reads each element again for its stores. cp.async copies 4 bytes at
// the least: of 2-byte elements that lie in pairs, the thread of an even
// output copies its element and its neighbour's; any other 1- or 2-byte
// element is copied in the aligned word around it. Or the block's threads
// stage its rows together: each row's elements of the block's outputs are
// copied in the 16-byte units that cover them. Columns too long for a
// block's share of an SM are shared by the blocks of a cluster (sm_90), each
// holding a part, which meet through distributed shared memory.
#include <algorithm>
#include <vector>

#include "codegen/reduce_kernel.hpp"
#include "codegen/source_writer.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

// Whether a kernel's copies take pairs: its copied reads have 2-byte
// elements and none is held in words or staged (then all lie in pairs).
bool copies_pairs(const ReduceSpec& spec) {
  return !spec.words && !spec.staged && itemsize(spec.reads[varying_reads(spec)[0]].dtype) == 2;
}

// Whether every read's rows of a block's outputs start on 16 bytes: staged,
// they take no more bytes than their elements (a unit fewer).
bool rows_start_on_16_bytes(const ReduceSpec& spec) {
  for (int j : varying_reads(spec)) {
    if (staged_row_bytes(spec, j) != spec.to * std::int64_t(itemsize(spec.reads[j].dtype))) {
      return false;
    }
  }
  return true;
}

// Whether a block of `to` outputs may stage its rows (ReduceSpec::staged):
// every read that varies has 1- or 2-byte elements, contiguous along the
// outputs, and the block's outputs lie together in each row (one kept dim,
// or blocks that do not cross the innermost).
bool stages_rows(const ReduceSpec& spec, int to) {
  if (spec.kept.size() > 1 && spec.kept.back() % to != 0) return false;
  for (int j : varying_reads(spec)) {
    const ReduceOperand& read = spec.reads[j];
    if (itemsize(read.dtype) > 2 || read.kept.back() != 1) return false;
  }
  return true;
}

constexpr int kThreads = 256;  // threads of a block
// A warp's copies along a row, at the least: blocks of columns 32 bytes
// wide (8 floats) ran at 37-49% of copy where the split reached 48-52%
// (4095 x 4095 and 5110 x 3283 floats, 6141 x 5464 halves;
// bench/RESULTS.md, 2026-11-26).
constexpr int kStripBytes = 64;
// The static buffers where a block's columns meet, and a cluster's blocks.
constexpr int kMeetingBytes = 9 * 1024;
// Blocks that share an SM: while one waits for its copies, another reduces
// and stores. Where the columns come back from L2 (reads and writes fit in
// it), blocks of a quarter SM keep more SMs busy at once: x - mean(x, 0) of
// 2048 x 2048 floats ran at 78% of copy in halves of an SM, 88% in
// quarters; of 2896 x 2896 halves, 46% and 62% (bench/RESULTS.md, 2026-11-26).
constexpr int kBlocksPerSMFromMemory = 2;
constexpr int kBlocksPerSMFromL2 = 4;

class SharedColumns final : public ReduceWalk {
 public:
  // Columns whose kernel writes elements (a pass after the first reads them
  // again). Reads that all have 2-byte elements lying together in pairs are
  // copied in pairs, or staged where each row's pairs start on 16 bytes and
  // one block holds the columns; otherwise 1- and 2-byte reads are held in
  // words, or staged where a cluster shares the columns. A block takes the
  // most outputs, of those the lanes gave, whose columns fit in its share of
  // an SM's shared memory beside the meeting's buffers, shared by the fewest
  // blocks of a cluster that hold them, and no fewer than keep a warp's
  // copies to kStripBytes along a row. Where that leaves too few blocks to
  // fill a device (split_below), a split reads the columns from every SM.
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    if (!spec.columns || !writes_elements(spec) || limits.prefetch_max <= 0) return false;
    std::size_t narrowest = 8;
    bool pairs = true;
    for (int j : varying_reads(spec)) {
      const ReduceOperand& read = spec.reads[j];
      narrowest = std::min(narrowest, itemsize(read.dtype));
      pairs = pairs && itemsize(read.dtype) == 2 && pairs_together(spec, read);
    }
    const int fewest = std::min(spec.to, int(kStripBytes / narrowest));
    const bool words = narrowest < 4 && !pairs;
    // Writes are taken to be as many bytes as reads. Columns too long for a
    // quarter of an SM take a half.
    const bool in_l2 = 2 * read_bytes(spec) <= limits.l2_bytes;
    for (int blocks_per_sm : {kBlocksPerSMFromL2, kBlocksPerSMFromMemory}) {
      if (blocks_per_sm == kBlocksPerSMFromL2 && !in_l2) continue;
      const Fit f = fit(spec, limits, limits.prefetch_max / blocks_per_sm, fewest, words);
      if (f != Fit::none) return f == Fit::fits;
    }
    return false;
  }

  // Columns a cluster shares wait for its meeting with their copies held:
  // x - mean(x, 0) of (5793, 5793) halves ran 112 us in one kernel, 81 in
  // two; of (7485, 2241) floats, 113 against 78. Floats whose rows start on
  // 16 bytes stay: (4096, 4096), 56 against 75 us (H100, bench/RESULTS.md,
  // 2026-11-27).
  bool stores_apart(const ReduceSpec& spec) const override {
    return spec.cluster > 1 && !(narrowest_read(spec) >= 4 && rows_start_on_16_bytes(spec));
  }

  void launch(const ReduceKernel& k, GeneratedKernel& out) const override {
    ReduceWalk::launch(k, out);
    out.shared_bytes = std::size_t(held_bytes(k.spec(), k.spec().per));
    out.cluster = k.spec().cluster;
    out.blocks *= k.spec().cluster;
  }

  void header(const ReduceKernel& k, SourceWriter& w) const override {
    const ReduceSpec& s = k.spec();
    const bool pairs = copies_pairs(s);
    const std::string how = pairs ? "// memory, 4 bytes a copy by the thread of the even output of "
                                    "each pair,\n// "
                            : s.words ? "// memory, each 1- or 2-byte element in the 4-byte word "
                                        "around it,\n// "
                                      : "// memory, ";
    const std::string what =
        s.staged
            ? "The block's " + std::to_string(s.tr * s.per) +
                  " rows are copied into shared memory,\n// each row's elements of its "
                  "outputs in the 16-byte units that cover them,\n// "
            : "A thread's " + std::to_string(s.per) + " elements are copied into shared\n" + how;
    block_header(k, w,
                 what + "every copy in flight at once, and each pass reads them there.\n" +
                     (s.cluster > 1 ? "// A cluster of " + std::to_string(s.cluster) +
                                          " blocks shares the columns, each holding a part;\n"
                                          "// the blocks meet through distributed shared "
                                          "memory after each pass.\n"
                                    : ""));
  }

  std::string attributes(const ReduceKernel& k) const override {
    const int cluster = k.spec().cluster;
    return ReduceWalk::attributes(k) + (cluster > 1 ? cluster_dims(cluster) : "");
  }

  // A slot for each output more, where the blocks of a cluster meet.
  int slots(const ReduceKernel& k) const override {
    return ReduceWalk::slots(k) + (k.spec().cluster > 1 ? k.spec().to : 0);
  }

  void prologue(const ReduceKernel& k, SourceWriter& w) const override {
    if (k.spec().cluster == 1) return ReduceWalk::prologue(k, w);
    cluster_prologue(k, w);
  }

  // The block's threads meet, then the cluster's blocks.
  void meet(const ReduceKernel& k, SourceWriter& w, const std::string& value, const std::string& op,
            const std::string& buffer) const override {
    ReduceWalk::meet(k, w, value, op, buffer);
    const ReduceSpec& s = k.spec();
    if (s.cluster == 1) return;
    w.line(value + " = nf_cluster_column_allreduce<" + std::to_string(s.cluster) + ", " +
           std::to_string(s.to) + ">(" + value + ", " + op + ", nf_smem + " +
           std::to_string(2 * k.buffer_bytes()) + ");");
  }

  std::string store_guard(const ReduceKernel& k) const override {
    return k.spec().cluster > 1 ? "live && c == 0" : "live";
  }

  // Element k of thread t at k * threads + t, so that a warp's copies fill
  // consecutive addresses; each thread reads back what it copied, or, of a
  // pair, what its neighbour did (after a barrier).
  void shared(const ReduceKernel& k, SourceWriter& w) const override {
    w.line(k.spec().staged ? "// the block's rows, copied once"
                           : "// the thread's elements, copied once");
    shared_reads(k, w, "nf_held", k.spec().per);
  }

  void loads(const ReduceKernel& k, SourceWriter& w) const override {
    const ReduceSpec& s = k.spec();
    if (s.staged) return staged_loads(k, w);
    const bool pairs = copies_pairs(s);
    if (pairs) {
      w.line("// the elements of the thread's output and the next start coming into shared");
      w.line("// memory, all at once, where the output is even");
      w.open("if (o % 2 == 0)");
    } else {
      w.line("// the thread's elements start coming into shared memory, all at once");
    }
    open_elements(k, w);
    w.line("const nf_idx r = g;");
    k.model().reduced_coordinates(w);
    for (int j : varying_reads(s)) {
      const std::string element = k.model().element(j, "r");
      if (held_in_words(s, j)) {
        w.line("nf_fetch<4>(&" + slot(j) + ", nf_word_of(&" + element + "));");
      } else {
        w.line("nf_fetch<" + std::to_string(pairs ? 4 : itemsize(s.reads[j].dtype)) + ">(&" +
               slot(j) + ", &" + element + ");");
      }
    }
    w.close();
    w.close();
    if (pairs) w.close();
    w.line("nf_fetched();  // the thread's copies are in");
    if (pairs) w.line("__syncthreads();  // and its neighbour's");
    k.model().kept_declarations(w);
  }

  void element_loop(const ReduceKernel& k, SourceWriter& w,
                    const ElementPass& pass) const override {
    const ReduceSpec& s = k.spec();
    open_elements(k, w);
    // An element held in a word is found by its address's low bits, and
    // one in a staged row by its first element's.
    const auto held = [&](int j) {
      // Appended rather than "&" + ...: g++ 12 warns falsely (-Wrestrict) on
      // a literal prepended to a string.
      std::string at = "&";
      at += k.model().element(j, "r");
      if (s.staged) {
        return "nf_staged(s_in" + std::to_string(j) + " + (tr + k * " + std::to_string(s.tr) +
               ") * " + std::to_string(staged_row_bytes(s, j)) + ", " + at + ", lane)";
      }
      return held_in_words(s, j) ? "nf_from_word(" + slot(j) + ", " + at + ")" : slot(j) + ".v[0]";
    };
    k.element_body(w, pass, held, pass.stores || s.words);
    w.close();
    w.close();
  }

 private:
  enum class Fit { none, too_few_blocks, fits };

  // The widest tile of `fewest` outputs or more, shared by the fewest blocks
  // of a cluster, whose columns fit in `share` bytes of shared memory.
  static Fit fit(ReduceSpec& spec, const ReduceLimits& limits, std::int64_t share, int fewest,
                 bool words) {
    const std::int64_t groups = groups_of(spec);
    for (int to = spec.to; to >= fewest; to /= 2) {
      for (int cluster = 1; cluster <= limits.max_cluster; cluster *= 2) {
        ReduceSpec shared = spec;
        shared.to = to;
        shared.tr = kThreads / to;
        shared.cluster = cluster;
        // Staged rows hold 2 * to + 16 bytes a row of 2-byte columns where
        // words hold 4 * to: more blocks a cluster's columns on each SM.
        // Measured on an H100 (bench/RESULTS.md, 2026-11-26), x - mean(x, 0)
        // of 5793 x 5793 halves went from 2 to 3 blocks an SM and 132 to
        // 112 us; rows a block holds alone, with blocks enough an SM either
        // way, were up to 23% slower staged (their edge units read twice).
        // Pairs staged in as many bytes, their rows on 16 bytes, the other
        // way round: faster held by one block (x - mean(x, 0) of 512^3
        // halves, 250 to 225 us), slower shared by a cluster (6141 x 5464
        // bf16, 99 to 112 us).
        shared.staged = stages_rows(spec, to) &&
                        (words ? cluster > 1 : cluster == 1 && rows_start_on_16_bytes(shared));
        shared.words = words && !shared.staged;
        const std::int64_t per = (groups + shared.tr * cluster - 1) / (shared.tr * cluster);
        if (held_bytes(shared, per) > share - kMeetingBytes) continue;
        if ((numel(spec.kept) + to - 1) / to * cluster < limits.split_below) {
          return Fit::too_few_blocks;
        }
        shared.per = int(per);
        shared.shared = true;
        spec = std::move(shared);
        return Fit::fits;
      }
    }
    return Fit::none;
  }

  // Each read's rows, the block's part of each, start coming into shared
  // memory: unit u of the block's row i, from the unit around the element
  // of its first output, where the unit holds elements of its outputs.
  static void staged_loads(const ReduceKernel& k, SourceWriter& w) {
    const ReduceSpec& s = k.spec();
    const std::string TO = std::to_string(s.to);
    w.line("// the block's rows start coming into shared memory, all at once");
    w.line("const int lane = threadIdx.x % " + TO +
           ";  // outputs before the thread's in the block");
    w.line("const nf_idx left = rows - (o - lane);");
    w.line("const nf_idx tile_outputs = left < " + TO + " ? left : " + TO + ";  // live ones");
    for (int j : varying_reads(s)) {
      const std::int64_t row_bytes = staged_row_bytes(s, j);
      const std::string U = std::to_string(row_bytes / 16), J = std::to_string(j);
      w.open("for (int u = threadIdx.x; u < " + std::to_string(s.tr * s.per) + " * " + U +
             "; u += " + std::to_string(kThreads) + ")");
      w.line(std::string("const nf_idx g = ") + (s.cluster > 1 ? "g0 + " : "") + "u / " + U + ";");
      w.open("if (g < groups)");
      w.line("const nf_idx r = g;");
      k.model().reduced_coordinates(w);
      w.line("const unsigned char* const first = (const unsigned char*)(&" +
             k.model().element(j, "r") + " - lane);");
      w.line(
          "const unsigned char* const unit = (const unsigned char*)((unsigned long long)first & "
          "~15ull) + u % " +
          U + " * 16;");
      w.open("if (unit < first + tile_outputs * (nf_idx)sizeof(*in" + J + "))");
      w.line("nf_fetch<16>(s_in" + J + " + u / " + U + " * " + std::to_string(row_bytes) +
             " + u % " + U + " * 16, unit);");
      w.close();
      w.close();
      w.close();
    }
    w.line("nf_fetched();  // the thread's copies are in");
    w.line("__syncthreads();  // and the block's");
    k.model().kept_declarations(w);
  }

  static std::string slot(int j) {
    return "s_in" + std::to_string(j) + "[k * " + std::to_string(kThreads) + " + threadIdx.x]";
  }

  // Opens the loop over the thread's elements k (group g) and the test that
  // g lies in its column; two close()s end them.
  static void open_elements(const ReduceKernel& k, SourceWriter& w) {
    const ReduceSpec& s = k.spec();
    w.line("#pragma unroll 4");
    w.open("for (int k = 0; k < " + std::to_string(s.per) + "; ++k)");
    w.line(std::string("const nf_idx g = ") + (s.cluster > 1 ? "g0 + " : "") + "tr + (nf_idx)k * " +
           std::to_string(s.tr) + ";");
    w.open("if (live && g < groups)");
  }
};

}  // namespace

const ReduceWalk& shared_columns_walk() {
  static const SharedColumns walk;
  return walk;
}

}  // namespace nf::jit
