#include "cpu/interpreter.hpp"

#include <cstring>
#include <string>

#include "compile/manifest.hpp"
#include "core/shape_util.hpp"
#include "cpu/gpu_kernels.hpp"
#include "cpu/steps.hpp"
#include "cpu/value.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"

namespace nf::cpu {
namespace {

// The dtype a value the plan keeps in memory is stored in: its own, as on a
// GPU, except that f64 emulation keeps floating values in double.
DType stored_dtype(DType t) {
  return is_floating(t) && compute_type(t) == f64 ? f64 : t;
}

bool same_view(const Array& a, const Array& b) {
  return a.storage() == b.storage() && a.dtype() == b.dtype() && a.offset() == b.offset() &&
         a.shape() == b.shape() && a.strides() == b.strides();
}

// A view node of memory, over its input's memory.
Array view_of(const Node& n, const Array& in) {
  Strides s;
  if (n.op == OpId::reshape) {
    s = contiguous_strides(n.shape);  // the schedule aliases contiguous inputs only
  } else if (n.op == OpId::broadcast) {
    s = broadcast_strides(in.shape(), in.strides(), n.shape);
  } else {
    for (int a : n.axes) s.push_back(in.strides()[a]);
  }
  return Array(in.storage(), in.dtype(), n.shape, std::move(s), in.offset());
}

// Where a view the roots end in is not its output (a root that is a leaf or
// a view of one), a copy.
void copy(const Array& from, const Array& to) {
  const Program p = make_program({make_leaf(from)});
  run_fused(p, {false}, {{0, to}}, to.shape(), {from});
}

class Runner {
 public:
  Runner(const Program& p, const Schedule& plan, std::span<const Array> outputs)
      : p_(p), plan_(plan), outputs_(outputs), mem_(p.nodes.size()) {
    // A buffer is freed after the last step that reads it.
    last_read_.assign(p.nodes.size(), -1);
    for (int k = 0; k < int(plan.steps.size()); ++k) {
      for (int r : plan.steps[k].reads) last_read_[base_of(r)] = k;
    }
    // Roots are copied to their outputs at the end.
    for (int r : p.roots) last_read_[base_of(r)] = int(plan.steps.size());
  }

  void run() {
    for (int k = 0; k < int(plan_.steps.size()); ++k) {
      const Step& s = plan_.steps[k];
      for (int r : s.reads) resolve(r);
      std::vector<Write> writes;
      for (int w : s.writes) {
        // Leaves and views are copied to their outputs at the end.
        if (plan_.home[w] == Schedule::Home::step) writes.push_back({w, allocate(w)});
      }
      if (!writes.empty()) run_step(s, writes);
      for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
        if (plan_.home[i] == Schedule::Home::alias || last_read_[i] == k) {
          mem_[i].reset();
        }
      }
    }
    for (std::size_t r = 0; r < p_.roots.size(); ++r) {
      const Array& v = resolve(p_.roots[r]);
      if (!same_view(v, outputs_[r])) copy(v, outputs_[r]);
    }
  }

 private:
  const Node& node(int i) const { return *p_.nodes[i]; }

  int base_of(int i) const {
    while (plan_.home[i] == Schedule::Home::alias) i = p_.inputs[i][0];
    return i;
  }

  const Array& resolve(int i) {
    std::optional<Array>& m = mem_[i];
    if (m) return *m;
    switch (plan_.home[i]) {
      case Schedule::Home::leaf:
        m = *node(i).array;
        break;
      case Schedule::Home::alias:
        m = view_of(node(i), resolve(p_.inputs[i][0]));
        break;
      default:
        throw InternalError("cpu: node " + std::to_string(i) + " is read before it is written");
    }
    return *m;
  }

  // Where step node i goes: straight into its output where that stores what
  // the plan would, else a new buffer.
  const Array& allocate(int i) {
    const Node& n = node(i);
    const DType t = stored_dtype(n.dtype);
    const int root = plan_.root_of[i];
    if (root >= 0 && outputs_[root].dtype() == t) {
      mem_[i] = outputs_[root];
    } else {
      mem_[i] = host_array(t, n.shape);
    }
    return *mem_[i];
  }

  void run_step(const Step& s, const std::vector<Write>& writes) {
    switch (s.kind) {
      case StepKind::fused:
        return run_fused(p_, computed_by(p_, s), writes, s.domain, mem_);
      case StepKind::reduction:
        return run_reduction(p_, s, writes, mem_);
      case StepKind::gemm:
        return run_gemm(p_, s, writes.back(), mem_);
      case StepKind::gather:
        return run_gather(p_, s, writes.back(), mem_);
    }
  }

  const Program& p_;
  const Schedule& plan_;
  std::span<const Array> outputs_;
  Memory mem_;
  std::vector<int> last_read_;
};

// The CPU backend keeps nothing between runs but the plan itself.
class HostPlan final : public Prepared {};

class CpuBackend final : public Backend {
 public:
  Schedule schedule(const Program& p, std::span<const Array> outputs,
                    const ScheduleOptions& options) const override {
    return gpu_schedule(p, outputs, options);
  }
  std::shared_ptr<const Prepared> prepare(const Program& p, const Schedule&,
                                          std::span<const Array> outputs) const override {
    if (jit::manifest_on()) record_gpu_kernels(p, outputs);
    return std::make_shared<HostPlan>();
  }
  void run(const Prepared&, const Program& p, const Schedule& s,
           std::span<const Array> outputs) const override {
    Runner(p, s, outputs).run();
  }
  std::shared_ptr<Storage> allocate(std::size_t bytes, int) const override {
    return allocate_host(bytes);
  }
  void copy_from_host(void* dst, const void* host, std::size_t bytes, int) const override {
    std::memcpy(dst, host, bytes);
  }
  void copy_to_host(void* host, const void* src, std::size_t bytes, int) const override {
    std::memcpy(host, src, bytes);
  }
};

}  // namespace

const Backend& backend() {
  static const CpuBackend b;
  return b;
}

}  // namespace nf::cpu
