// Split rows: outputs of too many elements to hold, too few to fill a
// device, are split into `chunks` of `chunk` groups each, a block per chunk,
// and each pass becomes a kernel: blocks write their partial results to a
// workspace, and the next kernel combines them in a fixed order before its
// own pass; a last kernel makes the stores.
#include <algorithm>

#include "codegen/reduce_lanes.hpp"
#include "codegen/reduce_walks/streamed_rows.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr std::int64_t kMaxChunks = 4096;

class SplitRows final : public StreamedRows {
 public:
  // Outputs not held (held rows come first in reduce_walks()) are split
  // where their blocks, a split's, are too few to fill a device
  // (split_below) and each has more than a chunk of groups.
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    const std::int64_t groups = groups_of(spec);
    ReduceSpec split = spec;
    lanes_of(split).split_block(split);
    const std::int64_t blocks = (numel(split.kept) + split.to - 1) / split.to;
    if (blocks >= limits.split_below || groups <= limits.chunk_groups) return false;
    split.chunks = std::min((groups + limits.chunk_groups - 1) / limits.chunk_groups, kMaxChunks);
    split.chunk = (groups + split.chunks - 1) / split.chunks;
    spec = std::move(split);
    return true;
  }
};

}  // namespace

const ReduceWalk& split_rows_walk() {
  static const SplitRows walk;
  return walk;
}

}  // namespace nf::jit
