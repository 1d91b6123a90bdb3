#include "codegen/reduce_lanes.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr int kBlock = 256;         // threads of a block, unless one row needs more
constexpr int kSplitThreads = 256;  // threads of a block of a split row

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v && p < kMaxRowThreads) p *= 2;
  return p;
}

class Rows final : public ReduceLanes {
 public:
  // 16-byte vector loads where every varying operand lies contiguous along
  // its rows and every row starts on a vector boundary; then as many
  // threads a row as take about kGroupsPerThread groups each.
  void shape(ReduceSpec& spec, const std::vector<std::int64_t>& offsets) const override {
    const auto operand = [&](std::size_t j) -> const ReduceOperand& {
      return j < spec.reads.size() ? spec.reads[j] : spec.writes[j - spec.reads.size()];
    };
    const std::int64_t n = numel(spec.reduced);
    std::size_t widest = 1;
    bool contiguous_rows = true;
    for (std::size_t j = 0; j < offsets.size(); ++j) {
      const ReduceOperand& o = operand(j);
      if (o.along == Along::none) continue;
      contiguous_rows = contiguous_rows && o.along == Along::unit;
      widest = std::max(widest, itemsize(o.dtype));
    }
    const std::int64_t width = std::int64_t(16 / widest);
    bool aligned = contiguous_rows && n % width == 0;
    for (std::size_t j = 0; j < offsets.size() && aligned; ++j) {
      const ReduceOperand& o = operand(j);
      if (o.along == Along::none) continue;
      aligned = offsets[j] % width == 0;
      for (std::int64_t k : o.kept) aligned = aligned && k % width == 0;
    }
    spec.vec = aligned ? int(width) : 1;
    const std::int64_t groups = groups_of(spec);
    spec.tr = pow2_at_least((groups + kGroupsPerThread - 1) / kGroupsPerThread);
    spec.to = std::max(1, kBlock / spec.tr);
  }
  void split_block(ReduceSpec& spec) const override {
    spec.tr = kSplitThreads;
    spec.to = 1;
  }
  bool whole(const ReduceSpec& spec) const override {
    return spec.per > 0 && groups_of(spec) == std::int64_t(spec.cluster) * spec.tr * spec.per;
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
  // A warp's 32 threads on 32 consecutive outputs, kBlock / 32 on each.
  void shape(ReduceSpec& spec, const std::vector<std::int64_t>&) const override {
    spec.to = 32;
    spec.tr = kBlock / spec.to;
  }
  // A split column keeps its block: its warps' reads stay coalesced.
  void split_block(ReduceSpec&) const override {}
  // Columns keep their bounds tests, as they always have: skipping them
  // would change the source of every held column kernel.
  bool whole(const ReduceSpec&) const override { return false; }
  std::string thread(const ReduceSpec& spec) const override {
    return "const int tr = threadIdx.x / " + std::to_string(spec.to) + ";";
  }
  std::string output(const ReduceSpec& spec, const std::string& tile) const override {
    return tile + " * " + std::to_string(spec.to) + " + threadIdx.x % " + std::to_string(spec.to);
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
  const ReduceLanes& lanes = lanes_of(spec);
  lanes.shape(spec, offsets);
  return lanes;
}

const ReduceLanes& lanes_of(const ReduceSpec& spec) {
  if (spec.columns) return kColumns;
  return kRows;
}

}  // namespace nf::jit
