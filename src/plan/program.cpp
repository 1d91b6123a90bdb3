#include "plan/program.hpp"

#include "graph/build.hpp"
#include "graph/op_table.hpp"
#include "plan/flat_index.hpp"
#include "plan/reduction_cut.hpp"

#include <utility>

namespace nf {
namespace {

// Structural equality of two nodes whose inputs are already merged; guards
// the hash table against collisions.
bool same_node(const Node& a, const ProgramInputs& ia, const Node& b, const ProgramInputs& ib) {
  return a.op == b.op && a.dtype == b.dtype && a.weak == b.weak && a.shape == b.shape && ia == ib &&
         same_attributes(a, b) &&
         (a.array == b.array ||
          (a.array && b.array && a.array->storage() == b.array->storage() &&
           a.array->offset() == b.array->offset() && a.array->strides() == b.array->strides() &&
           a.array->dtype() == b.array->dtype()));
}

// A statement of a few dozen nodes is the common case; sizing for it up front
// saves regrowing every container as the walk goes.
constexpr std::size_t kTypicalNodes = 32;

// The walk's tables and stack, kept per thread and cleared by each call, so
// that a warm statement allocates only the program it returns. One thread
// never uses them twice at once: nothing make_program calls makes a program.
struct Scratch {
  FlatIndex done{kTypicalNodes};     // node address -> program index
  FlatIndex by_hash{kTypicalNodes};  // structural hash -> program index
  std::vector<std::pair<const NodePtr*, std::size_t>> stack;

  Scratch() { stack.reserve(kTypicalNodes); }
};

class Builder {
 public:
  Program program;

  // Cleared here rather than after use, so that a walk cut short by an
  // exception leaves nothing behind for the next one.
  Builder(Scratch& s, ProgramTarget target, std::span<const NodePtr> roots)
      : cut_(target == ProgramTarget::gpu),
        broadcast_back_(roots),
        done_(s.done),
        by_hash_(s.by_hash),
        stack_(s.stack) {
    done_.clear();
    by_hash_.clear();
    stack_.clear();
    program.nodes.reserve(kTypicalNodes);
    program.inputs.reserve(kTypicalNodes);
  }

  int visit(const NodePtr& root) {
    if (const int id = done(*root); id >= 0) return id;
    // Iterative post-order: expressions grown in loops can be very deep. The
    // stack holds the owning pointers, which live in the parents' inputs. A
    // child is pushed only when not yet done, and is finished before anything
    // else, so each node is added once and the root is finished last. A
    // node's replacement is visited from add(), above this walk's entries.
    const std::size_t base = stack_.size();
    stack_.push_back({&root, 0});
    int id = -1;
    while (stack_.size() > base) {
      auto& [owner, next] = stack_.back();
      const Node& node = **owner;
      if (next < node.inputs.size()) {
        const NodePtr& child = node.inputs[next++];
        if (done(*child) < 0) stack_.push_back({&child, 0});
        continue;
      }
      id = add(*owner);
      done_.insert(key(node), id);
      stack_.pop_back();
    }
    return id;
  }

  // A copy of node `id` that no other node merges with: the root of a value
  // asked for twice.
  int add_copy(int id) {
    program.nodes.push_back(make_elementwise(OpId::copy, program.nodes[id]));
    ProgramInputs ins;
    ins.push_back(id);
    program.inputs.push_back(ins);
    return int(program.nodes.size()) - 1;
  }

 private:
  static std::uint64_t key(const Node& n) { return reinterpret_cast<std::uintptr_t>(&n); }

  int done(const Node& n) const { return done_.find(key(n)); }

  int add(const NodePtr& owner) {
    const Node& n = *owner;
    if (cut_ && op_kind(n.op) == OpKind::reduction) {
      if (const int id = add_cut(n); id >= 0) return id;
    }
    ProgramInputs ins;
    for (const auto& in : n.inputs) ins.push_back(done(*in));
    const int same = by_hash_.find(
        n.hash, [&](int id) { return same_node(*program.nodes[id], program.inputs[id], n, ins); });
    if (same >= 0) return same;
    const int id = int(program.nodes.size());
    program.nodes.push_back(owner);
    program.inputs.push_back(ins);
    by_hash_.insert(n.hash, id);
    return id;
  }

  // A reduction cut in two stands for `n`: its new nodes read n's input,
  // which is already in the program. -1 where n is left whole.
  int add_cut(const Node& n) {
    const ReductionCut cut = cut_reduction(n, broadcast_back_);
    if (!cut.root) return -1;
    cuts_.push_back(cut.root);
    const int id = visit(cut.root);
    program.cut_firsts.push_back(done(*cut.first));
    return id;
  }

  const bool cut_;  // whether reductions may be cut in two
  BroadcastBack broadcast_back_;
  FlatIndex& done_;
  FlatIndex& by_hash_;
  // The replacements made by this walk, alive until it ends: done_ keys
  // nodes by address, and one merged with an equal node is in no list.
  std::vector<NodePtr> cuts_;
  std::vector<std::pair<const NodePtr*, std::size_t>>& stack_;
};

}  // namespace

Program make_program(std::span<const NodePtr> roots, ProgramTarget target) {
  thread_local Scratch scratch;
  Builder b(scratch, target, roots);
  b.program.roots.reserve(roots.size());
  for (const auto& r : roots) {
    int id = b.visit(r);
    // A step writes each node to one place: a value asked for twice
    // (nf::eval(a, a), or two equal expressions) is written again by a copy.
    if (std::ranges::find(b.program.roots, id) != b.program.roots.end()) id = b.add_copy(id);
    b.program.roots.push_back(id);
  }
  return std::move(b.program);  // a local's member is copied, not moved, unless asked
}

}  // namespace nf
