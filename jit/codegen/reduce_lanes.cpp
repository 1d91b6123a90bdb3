#include "codegen/reduce_lanes.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr int kBlock = 256;         // threads of a block, unless one row needs more
constexpr int kSplitThreads = 256;  // threads of a block of a split row
constexpr int kColumnFill = 8;      // blocks of columns a device takes for each of rows
constexpr int kMinColumnShare = 8;  // elements of a chunk of a column a thread takes, at least
// Vectors' width of elements in a shifted row that writes elements, at
// least. Rows of 2-byte elements 323 to 33938 long broadcast back ran 14-35%
// faster shifted (their vectors stored whole, nf_store_vector); rows of 4 to
// 15 vectors (34 to 76 halves, 46 and 63 floats, 26 doubles) 8% to 180%
// slower, their ends an element a thread (H100, bench/RESULTS.md).
constexpr int kShiftedWritten = 32;

constexpr int kWarp = 32;

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v && p < kMaxRowThreads) p *= 2;
  return p;
}

class Rows final : public ReduceLanes {
 public:
  // 16-byte vector loads where every varying operand lies contiguous along
  // its rows and every row starts on a vector boundary; where rows start
  // elsewhere but at the same place in a vector for every operand (rows of
  // odd width), shifted vectors; else vectors of the widest boundary every
  // row starts on; over several reduced dims, vectors along the innermost
  // where its runs allow (runs_in_vectors); then as many threads a row as
  // take about kGroupsPerThread groups each.
  void shape(ReduceSpec& spec, const std::vector<std::int64_t>& offsets) const override {
    const auto operand = [&](std::size_t j) -> const ReduceOperand& {
      return j < spec.reads.size() ? spec.reads[j] : spec.writes[j - spec.reads.size()];
    };
    // Run lanes count a row's groups from its threads (groups_of): asked
    // for, they are decided once tr is set below.
    const bool lanes_asked = spec.run_lanes;
    spec.run_lanes = false;
    const std::int64_t n = numel(spec.reduced);
    std::size_t widest = 1;
    bool contiguous_rows = true;
    std::vector<std::size_t> varying;
    for (std::size_t j = 0; j < offsets.size(); ++j) {
      const ReduceOperand& o = operand(j);
      if (o.along == Along::none) continue;
      contiguous_rows = contiguous_rows && o.along == Along::unit;
      widest = std::max(widest, itemsize(o.dtype));
      varying.push_back(j);
    }
    const std::int64_t width = std::int64_t(16 / widest);
    // Whether the varying operands' rows all start at the same place in a
    // vector: offsets and kept strides that agree modulo the width.
    bool together = contiguous_rows;
    for (std::size_t j : varying) {
      const ReduceOperand &o = operand(j), &first = operand(varying[0]);
      together = together && (offsets[j] - offsets[varying[0]]) % width == 0;
      for (std::size_t d = 0; d < o.kept.size(); ++d) {
        together = together && (o.kept[d] - first.kept[d]) % width == 0;
      }
    }
    // Whether every row starts on a boundary of w elements in every varying
    // operand and is a whole number of them long.
    const auto rows_start_on = [&](std::int64_t w) {
      bool on = contiguous_rows && n % w == 0;
      for (std::size_t j : varying) {
        on = on && offsets[j] % w == 0;
        for (std::int64_t k : operand(j).kept) on = on && k % w == 0;
      }
      return on;
    };
    const bool aligned = rows_start_on(width);
    // Shifted where measured faster than scalars on an H100 (bench/RESULTS.md):
    // rows that are reduced alone from two vectors on, and rows that also
    // write elements from kShiftedWritten; not where everything is one
    // output, whose scalar split is at copy speed already.
    const std::int64_t least = (writes_elements(spec) ? kShiftedWritten : 2) * width;
    spec.shifted = together && !aligned && !varying.empty() && !spec.kept.empty() && n >= least;
    // Rows neither aligned nor shifted that start on a narrower boundary
    // (rows of 76 halves on 8 bytes) are read in vectors of that width:
    // x - mean(x, 3) of (76, 76, 76, 76) f16 ran 47.0 us where elements ran
    // 60.4. Not where everything is one output: there they ran up to a
    // quarter faster on some rows and slower on others (H100,
    // bench/RESULTS.md).
    std::int64_t narrow = 1;
    for (std::int64_t w = width / 2; w > 1 && narrow == 1 && !spec.kept.empty(); w /= 2) {
      if (rows_start_on(w)) narrow = w;
    }
    const bool narrower = !aligned && !spec.shifted && narrow > 1;
    spec.vec = aligned || spec.shifted ? int(width)
               : narrower              ? int(narrow)
                                       : runs_in_vectors(spec, operand, varying, offsets, width);
    spec.covered =
        spec.covered && spec.vec == 1 && covers_runs(spec, operand, varying, offsets, width);
    if (spec.covered) spec.vec = int(width);
    // Threads of a row read its consecutive elements: a warp of them where
    // the row has a few elements for each, so that its reads stay coalesced.
    // Narrower vectors go about 16 bytes a thread: x - mean(x, 2) of
    // (6903, 23, 52) f16 in 8-byte vectors ran 9.1 us at two a thread where
    // four ran 14.1, x - mean(x, 3) of (24, 190, 90, 20) bf16 10.6 where
    // three ran 12.8; of (76, 76, 76, 76) f16 49.0 where three ran 47.0
    // (H100, bench/RESULTS.md).
    const std::int64_t groups = groups_of(spec);
    const std::int64_t aim = narrower
                                 ? std::max<std::int64_t>(1, 16 / (narrow * std::int64_t(widest)))
                                 : groups_in_flight(spec);
    spec.tr = std::max(
        pow2_at_least((groups + aim - 1) / aim),
        std::min(kWarp, pow2_at_least((groups + kGroupsPerThread - 1) / kGroupsPerThread)));
    spec.to = std::max(1, kBlock / spec.tr);
    spec.run_lanes = lanes_asked && runs_as_lanes(spec, operand, varying);
  }
  // Whether rows read an element at a time over several reduced dims can
  // take their runs as lanes (ReduceSpec::run_lanes): the innermost
  // contiguous in every varying operand, and the threads past the last whole
  // run of a step an eighth of the row's threads at most (a run of 75 a
  // block of 512: 62 idle).
  template <class Operand>
  static bool runs_as_lanes(const ReduceSpec& spec, const Operand& operand,
                            const std::vector<std::size_t>& varying) {
    if (spec.vec != 1 || spec.covered || varying.empty() || spec.reduced.size() < 2 ||
        numel(spec.reduced) == 0 || spec.reduced.back() > spec.tr) {
      return false;
    }
    for (std::size_t j : varying) {
      const ReduceOperand& o = operand(j);
      if (o.along != Along::general || o.reduced.back() != 1) return false;
    }
    return spec.tr % spec.reduced.back() * 8 <= spec.tr;
  }
  // Reductions over several dims whose innermost is contiguous in every
  // varying operand: its runs are read in vectors of the most elements, up
  // to `width`, that every run starts on a boundary of; 1 where none does.
  template <class Operand>
  static int runs_in_vectors(const ReduceSpec& spec, const Operand& operand,
                             const std::vector<std::size_t>& varying,
                             const std::vector<std::int64_t>& offsets, std::int64_t width) {
    if (varying.empty() || spec.reduced.size() < 2) return 1;
    const auto starts_on = [&](std::int64_t w) {
      if (spec.reduced.back() % w != 0) return false;
      for (std::size_t j : varying) {
        const ReduceOperand& o = operand(j);
        if (o.along != Along::general || o.reduced.back() != 1 || offsets[j] % w != 0) {
          return false;
        }
        for (std::size_t d = 0; d + 1 < o.reduced.size(); ++d) {
          if (o.reduced[d] % w != 0) return false;
        }
        for (std::int64_t k : o.kept) {
          if (k % w != 0) return false;
        }
      }
      return true;
    };
    for (std::int64_t w = width; w > 1; w /= 2) {
      if (starts_on(w)) return int(w);
    }
    return 1;
  }
  // Whether rows over several dims that write no elements can be read in
  // the vectors that cover their runs (ReduceSpec::covered): runs along the
  // innermost contiguous in every varying operand and at least a vector
  // long, each starting at the same place in a vector for all of them.
  template <class Operand>
  static bool covers_runs(const ReduceSpec& spec, const Operand& operand,
                          const std::vector<std::size_t>& varying,
                          const std::vector<std::int64_t>& offsets, std::int64_t width) {
    if (varying.empty() || spec.reduced.size() < 2 || spec.reduced.back() < width ||
        writes_elements(spec)) {
      return false;
    }
    const ReduceOperand& first = operand(varying[0]);
    const auto agree = [&](std::int64_t a, std::int64_t b) { return (a - b) % width == 0; };
    for (std::size_t j : varying) {
      const ReduceOperand& o = operand(j);
      if (o.along != Along::general || o.reduced.back() != 1) return false;
      if (!agree(offsets[j], offsets[varying[0]])) return false;
      for (std::size_t d = 0; d < o.kept.size(); ++d) {
        if (!agree(o.kept[d], first.kept[d])) return false;
      }
      for (std::size_t d = 0; d + 1 < o.reduced.size(); ++d) {
        if (!agree(o.reduced[d], first.reduced[d])) return false;
      }
    }
    return true;
  }
  void split_block(ReduceSpec& spec) const override {
    spec.tr = kSplitThreads;
    spec.to = 1;
  }
  // Rows too few to fill a device (split_below) are cut into chunks of
  // chunk_groups groups.
  std::int64_t split_chunks(const ReduceSpec& spec, std::int64_t blocks,
                            const ReduceLimits& limits) const override {
    const std::int64_t groups = groups_of(spec);
    if (blocks >= limits.split_below || groups <= limits.chunk_groups) return 1;
    return (groups + limits.chunk_groups - 1) / limits.chunk_groups;
  }
  bool whole(const ReduceSpec& spec) const override {
    // Run lanes leave threads idle past the last whole run of a step.
    return spec.per > 0 && !spec.run_lanes &&
           groups_of(spec) == std::int64_t(spec.cluster) * spec.tr * spec.per;
  }
  std::string thread(const ReduceSpec& spec) const override {
    return "const int tr = threadIdx.x % " + std::to_string(spec.tr) + ";";
  }
  std::string output(const ReduceSpec& spec, const std::string& tile) const override {
    return tile + " * " + std::to_string(spec.to) + " + threadIdx.x / " + std::to_string(spec.tr);
  }
  // A slot for each warp's partial result.
  int block_slots(const ReduceSpec& spec) const override {
    return std::max(1, spec.tr * spec.to / 32);
  }
  std::string allreduce(const ReduceSpec& spec) const override {
    return "nf_row_allreduce<" + std::to_string(spec.tr) + ">";
  }
};

class Columns final : public ReduceLanes {
 public:
  // A warp's threads on consecutive outputs: 32 of them, or all where there
  // are fewer, so that a warp reads whole rows of a narrow array. As many
  // threads share a column as take about 16 bytes of its elements each
  // (kGroupsPerThread to twice that, as many as a held walk keeps), up to a
  // block of kBlock; short columns widen the block to kBlock threads with
  // more outputs. (Blocks of 1024 threads holding columns of 256 elements,
  // and clusters of them holding longer ones, were tried on an H100: up to
  // four times slower than these where a thread holds few bytes;
  // bench/RESULTS.md.)
  void shape(ReduceSpec& spec, const std::vector<std::int64_t>&) const override {
    const std::int64_t outputs = thread_outputs(spec);
    // A column's group is one element of the widest varying operand, or a
    // pair's word.
    const std::int64_t aim = std::clamp<std::int64_t>(16 / std::int64_t(group_bytes(spec)),
                                                      kGroupsPerThread, 2 * kGroupsPerThread);
    spec.to = outputs < 32 ? pow2_at_least(outputs) : 32;
    spec.tr = std::min(pow2_at_least((groups_of(spec) + aim - 1) / aim), kBlock / spec.to);
    if (spec.tr * spec.to < kBlock) {
      spec.to = std::min(kBlock / spec.tr, pow2_at_least(outputs));
    }
    spec.tr = std::max(spec.tr, 32 / spec.to);  // whole warps
  }
  // The chunks of columns of one output a thread.
  static std::int64_t single_chunks(const ReduceSpec& spec, std::int64_t blocks,
                                    const ReduceLimits& limits) {
    const std::int64_t fill = limits.split_below * kColumnFill, groups = groups_of(spec);
    if (blocks >= fill) return 1;
    const std::int64_t chunks = std::max((fill + blocks - 1) / blocks,
                                         (groups + limits.chunk_groups - 1) / limits.chunk_groups);
    return std::min({chunks, groups / (std::int64_t(spec.tr) * kMinColumnShare),
                     std::int64_t(spec.tr) * limits.max_gathered});
  }
  // A split column's block: kBlock threads, warps on consecutive outputs as
  // before, so that its reads stay coalesced.
  void split_block(ReduceSpec& spec) const override { spec.tr = std::max(1, kBlock / spec.to); }
  // A thread of a column reads an element at a time where a thread of a row
  // reads 16 bytes: a device takes kColumnFill times as many blocks of
  // columns before it is full. Columns of blocks fewer than that are cut
  // into as many chunks as fill it, or as keep each at most chunk_groups
  // long, but into no more than leave kMinColumnShare elements a thread of
  // a chunk, or limits.max_gathered partial results for a thread of the next
  // kernel to combine, one after another.
  //
  // Pairs (ReduceSpec::pairs) take twice the chunks of columns of one
  // output a thread: as many blocks, each thread reading as many bytes. With
  // the chunks of single outputs, half the blocks left the device's last
  // wave short or the device part empty: sums over (0, 1, 2) of (76, 76,
  // 76, 76) halves ran 1.09x their time, over (1, 2) of (132, 279, 138,
  // 106) 1.06x (H200, bench/RESULTS.md). Columns that single outputs leave
  // whole stay whole: cut in two, a second kernel cost more than the blocks
  // gained (sums over 0 of (152, 152, 152, 152) halves 1.37x).
  std::int64_t split_chunks(const ReduceSpec& spec, std::int64_t blocks,
                            const ReduceLimits& limits) const override {
    if (!spec.pairs) return single_chunks(spec, blocks, limits);
    const std::int64_t single = single_chunks(spec, 2 * blocks, limits);
    if (single < 2) return 1;
    return std::min(2 * single, groups_of(spec) / (std::int64_t(spec.tr) * kMinColumnShare));
  }
  // Columns keep their bounds tests, as they always have: skipping them
  // would change the source of every held column kernel.
  bool whole(const ReduceSpec&) const override { return false; }
  std::string thread(const ReduceSpec& spec) const override {
    return "const int tr = threadIdx.x / " + std::to_string(spec.to) + ";";
  }
  std::string output(const ReduceSpec& spec, const std::string& tile) const override {
    const std::string o =
        tile + " * " + std::to_string(spec.to) + " + threadIdx.x % " + std::to_string(spec.to);
    return spec.pairs ? "2 * (" + o + ")" : o;
  }
  // A slot for each thread's partial result.
  int block_slots(const ReduceSpec& spec) const override { return spec.tr * spec.to; }
  std::string allreduce(const ReduceSpec& spec) const override {
    return "nf_column_allreduce<" + std::to_string(spec.to) + ", " + std::to_string(spec.tr) + ">";
  }
};

const Rows kRows;
const Columns kColumns;

}  // namespace

int groups_in_flight(const ReduceSpec& spec) {
  // As many registers in flight as kGroupsPerThread vectors: sum over (1, 3)
  // of (63, 63, 63, 63) f32 ran 23.3 us where four elements a thread ran
  // 32.7, of (27, 26, 110, 429) f16 46.1 where a cluster of six elements a
  // thread ran 81.1 (H100, bench/RESULTS.md).
  constexpr int kVectorRegisters = 4;  // of a 16-byte group
  return scalars_over_several(spec) ? kGroupsPerThread * kVectorRegisters / group_registers(spec)
                                    : kGroupsPerThread;
}

const ReduceLanes& choose_lanes(ReduceSpec& spec, const std::vector<std::int64_t>& offsets) {
  // The operand that decides: the first one that varies along the reduced
  // dims. Threads follow the smaller of its strides.
  const ReduceOperand* lead = nullptr;
  for (const auto* list : {&spec.reads, &spec.writes}) {
    for (const ReduceOperand& o : *list) {
      if (!lead && o.along != Along::none) lead = &o;
    }
  }
  if (lead && !spec.kept.empty() && numel(spec.kept) > 1) {
    spec.columns = std::llabs(lead->kept.back()) < std::llabs(lead->reduced.back());
  }
  spec.pairs = pairs_fit(spec);
  const ReduceLanes& lanes = lanes_of(spec);
  lanes.shape(spec, offsets);
  return lanes;
}

const ReduceLanes& lanes_of(const ReduceSpec& spec) {
  if (spec.columns) return kColumns;
  return kRows;
}

}  // namespace nf::jit
