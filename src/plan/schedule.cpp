#include "plan/schedule.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/config.hpp"

namespace nf {
namespace {

bool is_generator(OpKind k) {
  return k == OpKind::random || k == OpKind::iota;
}

// Nodes a fused kernel can compute from registers.
bool fusable(const Node& n) {
  switch (op_kind(n.op)) {
    case OpKind::constant:
    case OpKind::iota:
    case OpKind::random:
    case OpKind::cast:
    case OpKind::elementwise:
      return true;
    case OpKind::view:
      return n.op == OpId::broadcast;
    default:
      return false;
  }
}

bool is_reduction(const Node& n) {
  return op_kind(n.op) == OpKind::reduction;
}

// A product and the nodes after it that cuBLASLt computes in its epilogue.
struct Epilogue {
  std::vector<int> nodes;  // the product, then the add of the bias, the activation
  int bias = -1;           // the bias vector's node
  Activation activation = Activation::none;
};

class Planner {
 public:
  Planner(const Program& p, const ScheduleOptions& o) : p_(p), o_(o) {
    const std::size_t n = p_.nodes.size();
    mem_.assign(n, false);
    opaque_.assign(n, false);
    plan_.home.assign(n, Schedule::Home::none);
    plan_.root_of.assign(n, -1);
    for (std::size_t r = 0; r < p_.roots.size(); ++r) {
      int& slot = plan_.root_of[p_.roots[r]];
      if (slot < 0) slot = int(r);
    }
  }

  Schedule run() {
    find_epilogues();
    decide_memory();
    group_reductions();
    limit_kernel_size();
    make_steps();
    merge_steps();
    mark_read_again();
    return std::move(plan_);
  }

 private:
  const Node& node(int i) const { return *p_.nodes[i]; }
  const ProgramInputs& inputs(int i) const { return p_.inputs[i]; }

  // The shape reduction node r reads, and the shape it produces.
  const Shape& domain_of(int r) const { return node(inputs(r)[0]).shape; }
  bool same_reduction(int a, int b) const {
    return domain_of(a) == domain_of(b) && node(a).axes == node(b).axes;
  }

  // Whether a step computing another node computes node i too rather than
  // reading it. A root is recomputed rather than read back, so that the
  // statements of one nf::eval can share a kernel.
  bool inlined(int i) const {
    if (!mem_[i]) return true;
    return o_.fuse && !opaque_[i] && plan_.root_of[i] >= 0 &&
           (fusable(node(i)) || is_reduction(node(i)));
  }
  void keep_in_memory(int i) {
    mem_[i] = true;
    opaque_[i] = true;
  }

  // Pass 0: the nodes after each product that cuBLASLt computes in its
  // epilogue. Each must be the sole consumer of the one before and no root:
  // nothing else may read the values the epilogue never writes.
  void find_epilogues() {
    const int n = int(p_.nodes.size());
    epilogue_end_.assign(n, -1);
    if (!o_.fuse) return;
    std::vector<int> uses(n, 0), user(n, -1);
    for (int i = 0; i < n; ++i) {
      for (int in : inputs(i)) {
        uses[in] += 1;
        user[in] = i;
      }
    }
    const auto sole_user = [&](int i) {
      return uses[i] == 1 && plan_.root_of[i] < 0 ? user[i] : -1;
    };
    for (int g = 0; g < n; ++g) {
      const DType t = node(g).dtype;
      // cuBLASLt's epilogues come with its tensor-core products, not f64's.
      if (op_kind(node(g).op) != OpKind::gemm || (t != f32 && t != f16 && t != bf16)) continue;
      Epilogue e;
      e.nodes.push_back(g);
      int next = sole_user(g);
      if (next >= 0 && node(next).op == OpId::add && node(next).dtype == t) {
        const int other = inputs(next)[0] == g ? inputs(next)[1] : inputs(next)[0];
        e.bias = bias_vector(other, node(g).shape);
        if (e.bias >= 0) {
          e.nodes.push_back(next);
          next = sole_user(next);
        }
      }
      if (next >= 0 && node(next).dtype == t &&
          (node(next).op == OpId::relu || node(next).op == OpId::gelu_tanh)) {
        e.activation = node(next).op == OpId::relu ? Activation::relu : Activation::gelu_tanh;
        e.nodes.push_back(next);
      }
      if (e.nodes.size() == 1) continue;
      epilogue_end_[e.nodes.back()] = int(epilogues_.size());
      epilogues_.push_back(std::move(e));
    }
  }

  // The vector that node x, added to a product of shape `out`, adds along
  // the product's last axis (x itself, or what x broadcasts), if cuBLASLt can
  // read it as a bias: contiguous and 16-byte aligned (the add has cast it to
  // its own dtype, the product's). -1 if x is no such vector.
  int bias_vector(int x, const Shape& out) const {
    int v = x;
    if (node(x).op == OpId::broadcast) v = inputs(x)[0];
    const Node& nv = node(v);
    if (nv.shape.empty() || nv.shape.back() != out.back()) return -1;
    for (std::size_t d = 0; d + 1 < nv.shape.size(); ++d) {
      if (nv.shape[d] != 1) return -1;
    }
    const OpKind k = op_kind(nv.op);
    if (k == OpKind::leaf) {
      const Array& a = *nv.array;
      const bool unit = out.back() == 1 || a.strides().back() == 1;
      if (!unit || a.offset() * std::int64_t(itemsize(a.dtype())) % 16 != 0) return -1;
      return v;
    }
    // A computed vector is written to a new buffer; a view of one is not.
    return k == OpKind::view ? -1 : v;
  }

  // Pass 1: which values must exist in memory.
  void decide_memory() {
    const int n = int(p_.nodes.size());
    for (int r : p_.roots) mem_[r] = true;
    std::vector<bool> has_epilogue(n, false);
    for (const Epilogue& e : epilogues_) {
      if (e.bias >= 0) mem_[e.bias] = true;
      // What the epilogue writes is read from there, never recomputed.
      keep_in_memory(e.nodes.back());
      has_epilogue[e.nodes[0]] = true;
    }
    for (int i = 0; i < n; ++i) {
      const Node& nd = node(i);
      const OpKind k = op_kind(nd.op);
      if (k == OpKind::leaf || (k == OpKind::gemm && !has_epilogue[i])) mem_[i] = true;
      // A take is gathered from memory into memory: its consumers read it
      // from there.
      if (k == OpKind::gather) mem_[i] = true;
      if (k == OpKind::gemm || k == OpKind::gather || nd.op == OpId::reshape ||
          nd.op == OpId::permute) {
        for (int in : inputs(i)) mem_[in] = true;
        if (k == OpKind::view) mem_[i] = true;
      }
      if (!o_.fuse && k != OpKind::constant) mem_[i] = true;
    }
    for (int r : o_.apart) keep_in_memory(r);
    // A generator indexes itself by its own shape, so it runs over its own
    // domain; a consumer over a larger domain reads it from memory.
    for (int i = 0; i < n; ++i) {
      if (!fusable(node(i))) continue;
      for (int in : inputs(i)) {
        if (is_generator(op_kind(node(in).op)) && node(in).shape != node(i).shape) mem_[in] = true;
      }
    }
  }

  // Pass 2: a kernel holds the reductions of one domain and axes. Each node
  // learns which reduction its value depends on within a kernel (`ctx`, a
  // reduction's index, or -1); where two kinds meet, or a consumer of a
  // reduced value is neither over the domain nor over the reduced shape, the
  // value crosses to the next kernel through memory.
  void group_reductions() {
    const int n = int(p_.nodes.size());
    std::vector<int> ctx(n, -1);
    auto seen = [&](int j) { return inlined(j) ? ctx[j] : -1; };
    for (int i = 0; i < n; ++i) {
      const Node& nd = node(i);
      if (is_reduction(nd)) {
        const int x = inputs(i)[0];
        if (seen(x) >= 0 && !same_reduction(seen(x), i)) keep_in_memory(x);
        ctx[i] = i;
        continue;
      }
      if (!fusable(nd)) continue;
      int c = -1;
      for (int j : inputs(i)) {
        const int cj = seen(j);
        if (cj < 0) continue;
        if (c < 0) {
          c = cj;
        } else if (!same_reduction(c, cj)) {
          keep_in_memory(j);
        }
      }
      if (c >= 0 && nd.shape != domain_of(c) && nd.shape != node(c).shape) {
        for (int j : inputs(i)) {
          if (seen(j) >= 0) keep_in_memory(j);
        }
        c = -1;
      }
      ctx[i] = c;
    }
    // Generators index themselves by their own shape, which a reduction
    // kernel's coordinates do not follow: they run in kernels of their own.
    std::vector<bool> in_reduction(n, false);
    for (int i = n; i-- > 0;) {
      if (ctx[i] >= 0) in_reduction[i] = true;
      if (!in_reduction[i]) continue;
      for (int j : inputs(i)) {
        if (inlined(j)) in_reduction[j] = true;
      }
    }
    for (int i = 0; i < n; ++i) {
      if (in_reduction[i] && is_generator(op_kind(node(i).op))) keep_in_memory(i);
    }
  }

  // Split kernels that would read too many arrays or grow too large: the
  // biggest fused input of an oversized node goes to memory.
  void limit_kernel_size() {
    const int n = int(p_.nodes.size());
    std::vector<int> ops(n, 0), operands(n, 0);
    for (int i = 0; i < n; ++i) {
      if (!fusable(node(i))) continue;
      while (true) {
        ops[i] = 1;
        operands[i] = 0;
        int biggest = -1;
        for (int in : inputs(i)) {
          if (mem_[in] || !fusable(node(in))) {
            operands[i] += 1;
            continue;
          }
          ops[i] += ops[in];
          operands[i] += operands[in];
          if (biggest < 0 || ops[in] + operands[in] > ops[biggest] + operands[biggest])
            biggest = in;
        }
        if ((ops[i] <= o_.max_nodes && operands[i] < o_.max_operands) || biggest < 0) break;
        mem_[biggest] = true;
      }
      if (mem_[i]) {
        ops[i] = 0;
        operands[i] = 1;
      }
    }
  }

  bool memory_contiguous(int i) const {
    const Node& nd = node(i);
    if (plan_.home[i] == Schedule::Home::step) return true;
    if (plan_.home[i] == Schedule::Home::leaf) return nd.array->is_contiguous();
    return false;  // aliases: permutes and broadcasts are not, reshapes of them neither
  }

  // Pass 3: a step per value in memory, inputs first.
  void make_steps() {
    const int n = int(p_.nodes.size());
    for (int i = 0; i < n; ++i) {
      if (!mem_[i]) continue;
      const Node& nd = node(i);
      const OpKind k = op_kind(nd.op);
      if (k == OpKind::leaf) {
        plan_.home[i] = Schedule::Home::leaf;
      } else if (k == OpKind::view && mem_[inputs(i)[0]] &&
                 (nd.op != OpId::reshape || memory_contiguous(inputs(i)[0]))) {
        // A view of memory; a broadcast of a computed value (full's constant)
        // is computed by a kernel instead.
        plan_.home[i] = Schedule::Home::alias;
      } else if (epilogue_end_[i] >= 0) {
        plan_.home[i] = Schedule::Home::step;
        steps_add(gemm_step(epilogues_[epilogue_end_[i]]));
      } else if (k == OpKind::gemm) {
        plan_.home[i] = Schedule::Home::step;
        steps_add(gemm_step(Epilogue{{i}}));
      } else if (k == OpKind::gather) {
        plan_.home[i] = Schedule::Home::step;
        steps_add({StepKind::gather, nd.shape, {i}, {inputs(i)[0], inputs(i)[1]}, {i}, {}});
      } else {
        plan_.home[i] = Schedule::Home::step;
        steps_add(cone_step(i));
      }
    }
    // Roots that already live in memory are copied into their outputs.
    for (int r : p_.roots) {
      if (plan_.home[r] == Schedule::Home::leaf || plan_.home[r] == Schedule::Home::alias) {
        if (!copied_.insert(r).second) continue;
        steps_add({StepKind::fused, node(r).shape, {}, {r}, {r}, {}});
      }
    }
  }

  // The gemm step of a product and its epilogue, if any.
  Step gemm_step(const Epilogue& e) const {
    const int g = e.nodes[0];
    Step s{
        StepKind::gemm, node(g).shape, e.nodes, {inputs(g)[0], inputs(g)[1]}, {e.nodes.back()}, {}};
    if (e.bias >= 0) {
      s.reads.push_back(e.bias);
      s.bias = true;
    }
    s.activation = e.activation;
    return s;
  }

  // The cone below node `out`: every node the kernel computing it computes
  // too. With a reduction in it, the kernel iterates over that reduction's
  // domain.
  Step cone_step(int out) {
    Step s{StepKind::fused, node(out).shape, {}, {}, {out}, {}};
    std::vector<int> order;
    std::vector<std::pair<int, bool>> stack{{out, false}};
    std::unordered_set<int> seen;
    while (!stack.empty()) {
      auto [i, expanded] = stack.back();
      stack.pop_back();
      if (expanded) {
        order.push_back(i);
        continue;
      }
      if (!seen.insert(i).second) continue;
      if (i != out && !inlined(i)) {
        s.reads.push_back(i);
        continue;
      }
      if (is_reduction(node(i)) && s.kind != StepKind::reduction) {
        s.kind = StepKind::reduction;
        s.domain = domain_of(i);
        s.axes = node(i).axes;
      }
      stack.push_back({i, true});
      const ProgramInputs& ins = inputs(i);
      for (std::size_t j = ins.size(); j-- > 0;) {
        if (!seen.count(ins[j])) stack.push_back({ins[j], false});
      }
    }
    std::sort(order.begin(), order.end());  // program order is topological
    std::sort(s.reads.begin(), s.reads.end());
    s.nodes = std::move(order);
    return s;
  }

  void steps_add(Step s) { plan_.steps.push_back(std::move(s)); }

  // Two steps can share a kernel when both iterate over the same domain: a
  // fused step's elements are a reduction step's elements.
  static bool same_iteration(const Step& t, const Step& s) {
    const auto alone = [](const Step& x) {
      return x.kind == StepKind::gemm || x.kind == StepKind::gather;
    };
    if (alone(t) || alone(s) || t.domain != s.domain) return false;
    return t.kind != StepKind::reduction || s.kind != StepKind::reduction || t.axes == s.axes;
  }

  // Steps over the same domain share a kernel when the later one reads
  // nothing written at or after the earlier one (the Adam update: three
  // outputs, one pass; mean and var of the same rows: one pass).
  void merge_steps() {
    if (!o_.fuse) return;
    std::vector<Step> out;
    for (Step& s : plan_.steps) {
      bool merged = false;
      for (std::size_t a = out.size(); a-- > 0 && !merged;) {
        if (reads_any_written(s, out, a)) break;
        Step& t = out[a];
        if (!same_iteration(t, s) || t.nodes.empty() || s.nodes.empty() ||
            int(t.reads.size() + t.writes.size() + s.reads.size() + s.writes.size()) >
                o_.max_operands) {
          continue;
        }
        absorb(t, s);
        merged = true;
      }
      if (!merged) out.push_back(std::move(s));
    }
    plan_.steps = std::move(out);
  }

  // Steps that write reductions kept apart (ScheduleOptions::apart).
  void mark_read_again() {
    for (Step& s : plan_.steps) {
      for (int w : s.writes) {
        const bool apart = std::find(o_.apart.begin(), o_.apart.end(), w) != o_.apart.end();
        s.read_again = s.read_again || (s.kind == StepKind::reduction && apart);
      }
    }
  }

  static bool reads_any_written(const Step& s, const std::vector<Step>& steps, std::size_t a) {
    for (std::size_t j = a; j < steps.size(); ++j) {
      for (int w : steps[j].writes) {
        if (std::find(s.reads.begin(), s.reads.end(), w) != s.reads.end()) return true;
      }
    }
    return false;
  }

  static void absorb(Step& t, const Step& s) {
    auto unite = [](std::vector<int>& into, const std::vector<int>& from) {
      into.insert(into.end(), from.begin(), from.end());
      std::sort(into.begin(), into.end());
      into.erase(std::unique(into.begin(), into.end()), into.end());
    };
    unite(t.nodes, s.nodes);
    unite(t.reads, s.reads);
    unite(t.writes, s.writes);
    if (s.kind == StepKind::reduction) {
      t.kind = StepKind::reduction;
      t.axes = s.axes;
    }
  }

  const Program& p_;
  ScheduleOptions o_;
  Schedule plan_;
  std::vector<Epilogue> epilogues_;
  std::vector<int> epilogue_end_;  // per node: the epilogue it ends, or -1
  std::vector<bool> mem_;
  std::vector<bool> opaque_;  // in memory and read from there, root or not
  std::unordered_set<int> copied_;
};

}  // namespace

ScheduleOptions default_schedule_options() {
  ScheduleOptions o;
  o.fuse = config::switched_on(config::Var::fusion, true);
  return o;
}

Schedule make_schedule(const Program& p, const ScheduleOptions& options) {
  return Planner(p, options).run();
}

}  // namespace nf
