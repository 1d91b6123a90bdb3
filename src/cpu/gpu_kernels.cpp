#include "cpu/gpu_kernels.hpp"

#include <string>
#include <vector>

#include "codegen/step_kernels.hpp"
#include "compile/manifest.hpp"
#include "numfuse/jit.hpp"

namespace nf::cpu {

Schedule gpu_schedule(const Program& p, std::span<const Array> outputs,
                      const ScheduleOptions& options) {
  return jit::kernel_schedule(p, outputs, options, jit::reduce_limits_for(target_arch()));
}

void record_gpu_kernels(const Program& p, const Schedule& s, std::span<const Array> outputs) {
  const std::string arch = target_arch();
  const std::vector<Array> outs(outputs.begin(), outputs.end());
  for (jit::GeneratedKernel& k : jit::plan_kernels(p, s, outs, arch)) {
    jit::record_kernel({std::move(k.name), arch, std::move(k.signature), std::move(k.source)});
  }
}

}  // namespace nf::cpu
