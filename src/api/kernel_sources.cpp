#include "api/kernel_sources.hpp"

#include "codegen/step_kernels.hpp"
#include "compile/manifest.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "numfuse/jit.hpp"
#include "plan/memory_layout.hpp"

namespace nf {

std::vector<jit::GeneratedKernel> generate_kernels(const Program& p, const Schedule& s,
                                                   const std::vector<Array>& outputs,
                                                   const std::string& arch) {
  std::vector<jit::GeneratedKernel> kernels;
  const auto layouts = memory_layouts(p, s, outputs);
  const jit::ReduceLimits limits = jit::reduce_limits_for(arch);
  for (const Step& step : s.steps) {
    for (jit::GeneratedKernel& k :
         jit::StepKernels(p, s, step, layouts, outputs, limits).generated()) {
      kernels.push_back(std::move(k));
    }
  }
  return kernels;
}

void record_kernels(const Program& p, const Schedule& s, const std::vector<Array>& outputs) {
  const std::string arch = target_arch();
  for (jit::GeneratedKernel& k : generate_kernels(p, s, outputs, arch)) {
    jit::record_kernel({std::move(k.name), arch, std::move(k.signature), std::move(k.source)});
  }
}

Array planned_array(DType dtype, const Shape& shape) {
  return Array(std::make_shared<Storage>(), dtype, shape, contiguous_strides(shape), 0);
}

}  // namespace nf
