#include "plan/program.hpp"

#include <cstring>
#include <unordered_map>
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
    // Iterative post-order: expressions grown in loops can be very deep.
    std::vector<std::pair<const Node*, std::size_t>> stack{{root.get(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (done_.count(node)) {
        stack.pop_back();
        continue;
      }
      if (next < node->inputs.size()) {
        const Node* child = node->inputs[next++].get();
        if (!done_.count(child)) stack.push_back({child, 0});
        continue;
      }
      done_[node] = add(*node);
      stack.pop_back();
    }
    return done_.at(root.get());
  }

 private:
  int add(const Node& n) {
    std::vector<int> ins;
    for (const auto& in : n.inputs) ins.push_back(done_.at(in.get()));
    auto range = by_hash_.equal_range(n.hash);
    for (auto it = range.first; it != range.second; ++it) {
      if (same_node(*program.nodes[it->second], program.inputs[it->second], n, ins)) {
        return it->second;
      }
    }
    const int id = int(program.nodes.size());
    program.nodes.push_back(node_ptr(n));
    program.inputs.push_back(std::move(ins));
    by_hash_.emplace(n.hash, id);
    return id;
  }

  // Nodes are owned by their parents' input lists; find the owning pointer.
  NodePtr node_ptr(const Node& n) { return owners_.at(&n); }

 public:
  void own(const NodePtr& root) {
    std::vector<const Node*> stack{root.get()};
    owners_.emplace(root.get(), root);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const auto& in : n->inputs) {
        if (owners_.emplace(in.get(), in).second) stack.push_back(in.get());
      }
    }
  }

 private:
  std::unordered_map<const Node*, int> done_;
  std::unordered_multimap<std::uint64_t, int> by_hash_;
  std::unordered_map<const Node*, NodePtr> owners_;
};

}  // namespace

Program make_program(const std::vector<NodePtr>& roots) {
  Builder b;
  for (const auto& r : roots) b.own(r);
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
