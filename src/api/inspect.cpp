// Plans shown to users: the same schedule and code generation that running a
// statement uses, stopped before compilation.
#include <mutex>
#include <sstream>

#include "codegen/fused_spec.hpp"
#include "codegen/reduce_codegen.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "numfuse/jit.hpp"
#include "plan/memory_layout.hpp"

namespace nf {

struct Plan::Impl {
  Program program;
  Schedule schedule;
  std::vector<Array> outputs;
  std::vector<std::string> sources;  // one per kernel, in step order
};

namespace {

std::mutex g_arch_mutex;
std::string g_arch = "sm_90";

std::string describe(int node, const Layout& l) {
  std::ostringstream o;
  o << "n" << node << ":" << name(l.dtype) << to_string(l.shape);
  return o.str();
}

}  // namespace

Plan plan(const std::vector<Expr>& roots) {
  auto impl = std::make_shared<Plan::Impl>();
  std::vector<NodePtr> nodes;
  for (const Expr& e : roots) {
    nodes.push_back(e.node());
    // Where the results would go; nothing is allocated.
    impl->outputs.emplace_back(std::make_shared<Storage>(), e.dtype(), e.shape(),
                               contiguous_strides(e.shape()), 0);
  }
  impl->program = make_program(nodes);
  impl->schedule = make_schedule(impl->program, default_schedule_options());
  const auto layouts = memory_layouts(impl->program, impl->schedule, impl->outputs);
  for (const Step& step : impl->schedule.steps) {
    if (step.kind == StepKind::reduction) {
      const jit::ReduceSpec spec =
          jit::make_reduce_spec(impl->program, impl->schedule, step, layouts, impl->outputs,
                                jit::reduce_limits_for(target_arch()));
      for (jit::GeneratedKernel& k : jit::generate_reduce(spec)) {
        impl->sources.push_back(std::move(k.source));
      }
    } else if (step.kind == StepKind::fused) {
      const jit::FusedSpec spec =
          jit::make_fused_spec(impl->program, impl->schedule, step, layouts, impl->outputs);
      impl->sources.push_back(jit::generate_fused(spec).source);
    }
  }
  return Plan(std::move(impl));
}

int Plan::kernel_count() const {
  return int(impl_->sources.size());
}

int Plan::gemm_count() const {
  int n = 0;
  for (const Step& s : impl_->schedule.steps) n += s.kind == StepKind::gemm;
  return n;
}

std::vector<std::string> Plan::sources() const {
  return impl_->sources;
}

std::string Plan::to_string() const {
  const Schedule& s = impl_->schedule;
  const auto layouts = memory_layouts(impl_->program, s, impl_->outputs);
  std::ostringstream o;
  std::int64_t total = 0;
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const Step& step = s.steps[k];
    const char* kind = step.kind == StepKind::fused       ? "fused kernel"
                       : step.kind == StepKind::reduction ? "reduction"
                                                          : "gemm";
    std::int64_t bytes = 0;
    o << "step " << k << ": " << kind;
    if (step.bias) o << " + bias";
    if (step.activation == Activation::relu) o << ", relu";
    if (step.activation == Activation::gelu_tanh) o << ", gelu_tanh";
    o << " over " << nf::to_string(step.domain) << "\n  reads ";
    for (int r : step.reads) {
      const Layout& l = *layouts[r];
      bytes += numel(l.shape) * std::int64_t(itemsize(l.dtype));
      o << describe(r, l) << " ";
    }
    o << "\n  writes ";
    for (int w : step.writes) {
      const Layout l = jit::write_layout(s, w, layouts, impl_->outputs);
      bytes += numel(l.shape) * std::int64_t(itemsize(l.dtype));
      o << describe(w, l) << " ";
    }
    o << "\n  moves " << bytes << " bytes\n";
    total += bytes;
  }
  o << "total: " << s.steps.size() << " steps, " << total << " bytes\n";
  return o.str();
}

std::string kernel_source(const Expr& e) {
  std::string out;
  for (const std::string& src : plan({e}).sources()) out += (out.empty() ? "" : "\n") + src;
  return out;
}

void set_target_arch(const std::string& arch) {
  std::lock_guard<std::mutex> lock(g_arch_mutex);
  g_arch = arch;
}

std::string target_arch() {
  std::lock_guard<std::mutex> lock(g_arch_mutex);
  return g_arch;
}

}  // namespace nf
