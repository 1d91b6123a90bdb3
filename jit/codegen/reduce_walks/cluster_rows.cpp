// Cluster rows: rows too long for one block to hold, where the device has
// thread block clusters (sm_90), are shared by `cluster` blocks, each
// holding tr * per consecutive groups; the blocks meet through distributed
// shared memory after each pass. One kernel, which reads each row once.
#include <algorithm>

#include "codegen/reduce_kernel.hpp"
#include "codegen/reduce_walks/held_rows.hpp"
#include "codegen/source_writer.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

constexpr int kClusterThreads = 256;  // threads of a block of a cluster

bool one_at_a_time_over_several(const ReduceSpec& spec) {
  return spec.vec == 1 && spec.reduced.size() > 1;
}

class ClusterRows final : public HeldRows {
 public:
  // A row too long for one block to hold (more than held_groups_at_most a
  // thread at kMaxRowThreads threads) is shared by a cluster of blocks of
  // kClusterThreads threads, as many as make about groups_in_flight groups
  // a thread, where that many blocks hold it: max_held at most of elements
  // read one at a time over several reduced dims, which keep to 32
  // registers (attributes). The cluster reads the row once, where a block
  // would read it again for each pass.
  bool applies(ReduceSpec& spec, const ReduceLimits& limits) const override {
    const std::int64_t groups = groups_of(spec), rows = numel(spec.kept);
    const std::int64_t held = held_groups_at_most(spec, limits);
    if (spec.columns || limits.max_cluster <= 1 || held <= 0 ||
        groups <= std::int64_t(kMaxRowThreads) * held) {
      return false;
    }
    const std::int64_t most = one_at_a_time_over_several(spec) ? limits.max_held : held;
    const std::int64_t aim = kClusterThreads * std::min<std::int64_t>(groups_in_flight(spec), most);
    const std::int64_t blocks =
        std::min<std::int64_t>(limits.max_cluster, (groups + aim - 1) / aim);
    const std::int64_t per = (groups + blocks * kClusterThreads - 1) / (blocks * kClusterThreads);
    if (per > most || rows * blocks < limits.split_below) return false;
    spec.tr = kClusterThreads;
    spec.to = 1;
    spec.per = int(per);
    spec.cluster = int(blocks);
    spec.whole = lanes_of(spec).whole(spec);
    return true;
  }

  void launch(const ReduceKernel& k, GeneratedKernel& out) const override {
    HeldRows::launch(k, out);
    out.cluster = k.spec().cluster;
    out.blocks *= k.spec().cluster;
  }

  void header(const ReduceKernel& k, SourceWriter& w) const override {
    const ReduceSpec& s = k.spec();
    w.raw("//\n// Each output element (a row) is reduced by a cluster of " +
          std::to_string(s.cluster) + " blocks of " + std::to_string(s.tr) +
          " threads;\n// a block holds " + std::to_string(s.tr * s.per) +
          " consecutive group(s) of " + std::to_string(s.vec) +
          " element(s) in registers, and the blocks\n// meet through distributed shared "
          "memory after each pass.\n");
  }

  // A cluster's blocks of 4-byte values fit four to an SM with at most 64
  // registers a thread: at 72, three fitted, and softmax on 512x65536 lost
  // 7 points of copy bandwidth (bench/RESULTS.md). 8-byte values would
  // spill at 64. Elements read one at a time over several reduced dims
  // hold little but the addresses of their loads, which the compiler
  // computes all at once where it may take the registers: at most 32 keep
  // a full SM of threads reading ((1618, 1103, 9) f32 over axes 0 and 2:
  // 65.6 us at 43 registers, five blocks an SM; 54.5 at 32, eight; H100,
  // bench/RESULTS.md).
  std::string attributes(const ReduceKernel& k) const override {
    const ReduceModel& m = k.model();
    const ReduceSpec& s = k.spec();
    const int threads = s.tr * s.to;
    const bool narrow = std::none_of(m.step().nodes.begin(), m.step().nodes.end(),
                                     [&](int i) { return itemsize(m.node(i).dtype) > 4; });
    const int registers = one_at_a_time_over_several(s) ? 32 : 64;
    return "__launch_bounds__(" + std::to_string(threads) +
           (narrow ? ", " + std::to_string(65536 / (threads * registers)) : "") + ") " +
           cluster_dims(s.cluster);
  }

  // One slot more, where the blocks of the cluster meet.
  int slots(const ReduceKernel& k) const override { return HeldRows::slots(k) + 1; }

  void prologue(const ReduceKernel& k, SourceWriter& w) const override { cluster_prologue(k, w); }

  // The block's threads meet, then the cluster's blocks.
  void meet(const ReduceKernel& k, SourceWriter& w, const std::string& value, const std::string& op,
            const std::string& buffer) const override {
    HeldRows::meet(k, w, value, op, buffer);
    w.line(value + " = nf_cluster_allreduce<" + std::to_string(k.spec().cluster) + ">(" + value +
           ", " + op + ", nf_smem + " + std::to_string(2 * k.buffer_bytes()) + ");");
  }

  std::string store_guard(const ReduceKernel&) const override { return "live && c == 0"; }

 protected:
  // The block's part of the row.
  std::string first_group(const ReduceKernel&) const override { return "g0 + "; }
};

}  // namespace

const ReduceWalk& cluster_rows_walk() {
  static const ClusterRows walk;
  return walk;
}

}  // namespace nf::jit
