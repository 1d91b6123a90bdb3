// Cluster rows: rows too long for one block to hold, where the device has
// thread block clusters (sm_90), are shared by `cluster` blocks, each
// holding tr * per consecutive groups; the blocks meet through distributed
// shared memory after each pass. One kernel, which reads each row once.
#include <algorithm>

#include "codegen/reduce_lanes.hpp"
#include "codegen/reduce_walks/held_rows.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr int kClusterThreads = 256;  // threads of a block of a cluster

class ClusterRows final : public HeldRows {
 public:
  // A row too long for one block to hold (more than max_held groups a
  // thread at kMaxRowThreads threads) is shared by a cluster of blocks of
  // kClusterThreads threads, as many as make about kGroupsPerThread groups
  // a thread, where that many blocks hold it. The cluster reads the row
  // once, where a block would read it again for each pass.
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    const std::int64_t groups = groups_of(spec), rows = numel(spec.kept);
    if (spec.columns || limits.max_cluster <= 1 || limits.max_held <= 0 ||
        groups <= std::int64_t(kMaxRowThreads) * limits.max_held) {
      return false;
    }
    const std::int64_t aim = kClusterThreads * std::min(kGroupsPerThread, limits.max_held);
    const std::int64_t blocks =
        std::min<std::int64_t>(limits.max_cluster, (groups + aim - 1) / aim);
    const std::int64_t per = (groups + blocks * kClusterThreads - 1) / (blocks * kClusterThreads);
    if (per > limits.max_held || rows * blocks < limits.split_below) return false;
    spec.tr = kClusterThreads;
    spec.to = 1;
    spec.per = int(per);
    spec.cluster = int(blocks);
    spec.whole = lanes_of(spec).whole(spec);
    return true;
  }
};

}  // namespace

const ReduceWalk& cluster_rows_walk() {
  static const ClusterRows walk;
  return walk;
}

}  // namespace nf::jit
