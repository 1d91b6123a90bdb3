#include "cpu/gpu_kernels.hpp"

#include <string>

#include "compile/manifest.hpp"
#include "numfuse/jit.hpp"
#include "plan/program.hpp"

namespace nf::cpu {

Schedule gpu_schedule(const Program& p, std::span<const Array> outputs,
                      const ScheduleOptions& options) {
  return jit::kernel_schedule(p, outputs, options, jit::reduce_limits_for(target_arch()));
}

std::vector<jit::GeneratedKernel> gpu_kernels(const Program& p, std::span<const Array> outputs) {
  std::vector<NodePtr> roots;
  for (int r : p.roots) roots.push_back(p.nodes[r]);
  const Program gpu = make_program(roots, ProgramTarget::gpu);
  const Schedule s = gpu_schedule(gpu, outputs, default_schedule_options());
  return jit::plan_kernels(gpu, s, std::vector<Array>(outputs.begin(), outputs.end()),
                           target_arch());
}

void record_gpu_kernels(const Program& p, std::span<const Array> outputs) {
  const std::string arch = target_arch();
  for (jit::GeneratedKernel& k : gpu_kernels(p, outputs)) {
    jit::record_kernel({std::move(k.name), arch, std::move(k.signature), std::move(k.source)});
  }
}

}  // namespace nf::cpu
