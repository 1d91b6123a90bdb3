#include "cpu/convert.hpp"
#include "cpu/steps.hpp"
#include "cpu/thread_pool.hpp"

namespace nf::cpu {

std::vector<bool> computed_by(const Program& p, const Step& s) {
  std::vector<bool> mask(p.nodes.size(), false);
  for (int i : s.nodes) mask[i] = true;
  return mask;
}

void run_fused(const Program& p, const std::vector<bool>& computed,
               const std::vector<Write>& writes, const Shape& domain, const Memory& mem) {
  std::vector<int> targets;
  for (const Write& w : writes) targets.push_back(w.node);
  const std::vector<int> nodes = nodes_to_compute(p, targets, computed, mem);
  // One elementwise write, computed last, of the dtype it is computed in:
  // computed straight into the target.
  const Write* direct = nullptr;
  if (writes.size() == 1 && !nodes.empty() && nodes.back() == writes[0].node) {
    const Node& n = *p.nodes[writes[0].node];
    const DType t = writes[0].target.dtype();
    if (op_kind(n.op) == OpKind::elementwise && compute_type(n.dtype) == t &&
        compute_type(t) == t) {
      direct = &writes[0];
    }
  }
  const Tiling tiling(domain, kBlockElements);
  parallel_for(tiling.size(), [&](std::int64_t t) {
    const Box box = tiling.box(t);
    BlockEvaluator block(p, mem, box);
    if (direct) {
      block.write_into(direct->node,
                       view_or_load(sub_array(direct->target, block.box_of(direct->node))));
    }
    block.compute(nodes);
    if (direct) return;
    for (const Write& w : writes) {
      store(block.value(w.node), sub_array(w.target, block.box_of(w.node)));
    }
  });
}

}  // namespace nf::cpu
