#include "plan/program.hpp"

#include "plan/flat_index.hpp"

#include <cstring>
#include <utility>

namespace nf {
namespace {

// Structural equality of two nodes whose inputs are already merged; guards
// the hash table against collisions.
bool same_node(const Node& a, const std::vector<int>& ia, const Node& b,
               const std::vector<int>& ib) {
  return a.op == b.op && a.dtype == b.dtype && a.weak == b.weak && a.shape == b.shape && ia == ib &&
         std::memcmp(&a.fvalue, &b.fvalue, sizeof a.fvalue) == 0 && a.ivalue == b.ivalue &&
         a.axes == b.axes && a.seed == b.seed && a.stream == b.stream &&
         (a.array == b.array ||
          (a.array && b.array && a.array->storage() == b.array->storage() &&
           a.array->offset() == b.array->offset() && a.array->strides() == b.array->strides() &&
           a.array->dtype() == b.array->dtype()));
}

class Builder {
 public:
  Program program;

  int visit(const NodePtr& root) {
    // Iterative post-order: expressions grown in loops can be very deep. The
    // stack holds the owning pointers, which live in the parents' inputs.
    std::vector<std::pair<const NodePtr*, std::size_t>> stack{{&root, 0}};
    while (!stack.empty()) {
      auto& [owner, next] = stack.back();
      const Node& node = **owner;
      if (next == 0 && done(node) >= 0) {
        stack.pop_back();
        continue;
      }
      if (next < node.inputs.size()) {
        const NodePtr& child = node.inputs[next++];
        if (done(*child) < 0) stack.push_back({&child, 0});
        continue;
      }
      done_.insert(key(node), add(*owner));
      stack.pop_back();
    }
    return done(*root);
  }

 private:
  static std::uint64_t key(const Node& n) { return reinterpret_cast<std::uintptr_t>(&n); }
  int done(const Node& n) const { return done_.find(key(n)); }

  int add(const NodePtr& owner) {
    const Node& n = *owner;
    std::vector<int> ins;
    ins.reserve(n.inputs.size());
    for (const auto& in : n.inputs) ins.push_back(done(*in));
    const int same = by_hash_.find(
        n.hash, [&](int id) { return same_node(*program.nodes[id], program.inputs[id], n, ins); });
    if (same >= 0) return same;
    const int id = int(program.nodes.size());
    program.nodes.push_back(owner);
    program.inputs.push_back(std::move(ins));
    by_hash_.insert(n.hash, id);
    return id;
  }

  FlatIndex done_;     // node address -> program index
  FlatIndex by_hash_;  // structural hash -> program index
};

}  // namespace

Program make_program(const std::vector<NodePtr>& roots) {
  Builder b;
  for (const auto& r : roots) b.program.roots.push_back(b.visit(r));
  Program& p = b.program;
  p.last_use.assign(p.nodes.size(), -1);
  for (int i = 0; i < int(p.nodes.size()); ++i) {
    for (int in : p.inputs[i]) p.last_use[in] = i;
  }
  for (int r : p.roots) p.last_use[r] = int(p.nodes.size());
  return p;
}

}  // namespace nf
