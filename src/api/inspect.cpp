// Plans shown to users: the same schedule and code generation that running a
// statement uses, stopped before compilation.
#include <algorithm>
#include <mutex>
#include <sstream>

#include "codegen/fused_spec.hpp"
#include "codegen/step_kernels.hpp"
#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/config.hpp"
#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"
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
std::string g_arch;  // empty until first use, then NF_TARGET_ARCH or "sm_90"

std::string checked_arch(const std::string& arch, const char* from) {
  if (!jit::is_device_arch(arch)) {
    throw ValueError(std::string(from) + " \"" + arch +
                     "\" is not a GPU architecture: expected sm_ and its number, such as sm_90");
  }
  return arch;
}

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
    impl->outputs.push_back(planned_array(e.dtype(), e.shape()));
  }
  impl->program = make_program(nodes, ProgramTarget::gpu);
  impl->schedule = jit::kernel_schedule(impl->program, impl->outputs, default_schedule_options(),
                                        jit::reduce_limits_for(target_arch()));
  for (jit::GeneratedKernel& k :
       jit::plan_kernels(impl->program, impl->schedule, impl->outputs, target_arch())) {
    impl->sources.push_back(std::move(k.source));
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
                       : step.kind == StepKind::gather    ? "gather"
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
    if (std::ranges::any_of(step.writes, [&](int w) {
          return std::ranges::find(impl_->program.cut_firsts, w) != impl_->program.cut_firsts.end();
        })) {
      // make_program cut a reduction here (plan/reduction_cut.hpp).
      o << "  the first half of a reduction cut in two: over the innermost run of its axes,\n"
           "  whose rows it reads in vectors, into partial results that a later reduction\n"
           "  takes over the rest; one kernel would read those runs an element at a time\n";
    }
    if (step.read_again) {
      // jit::kernel_schedule cut the statement here (ReduceWalk::stores_apart).
      o << "  cut in two: its reductions go to memory and a later kernel broadcasts them\n"
           "  back, which runs faster than this kernel's walk broadcasting them itself\n";
    }
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
  const std::string checked = checked_arch(arch, "set_target_arch:");
  std::lock_guard<std::mutex> lock(g_arch_mutex);
  g_arch = checked;
}

KernelCacheStats kernel_cache_stats() {
  const jit::CompileStats compiled = jit::compile_stats();
  return {compiled.compiles, compiled.ms, jit::disk_cache_loads()};
}

std::string target_arch() {
  std::lock_guard<std::mutex> lock(g_arch_mutex);
  if (g_arch.empty()) {
    g_arch = config::read(config::Var::target_arch).value_or("sm_90");
  }
  return g_arch;
}

}  // namespace nf
