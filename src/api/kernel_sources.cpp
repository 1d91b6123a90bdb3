#include "api/kernel_sources.hpp"

#include "codegen/fused_codegen.hpp"
#include "codegen/fused_spec.hpp"
#include "codegen/reduce_codegen.hpp"
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
  for (const Step& step : s.steps) {
    if (step.kind == StepKind::reduction) {
      const jit::ReduceSpec spec =
          jit::make_reduce_spec(p, s, step, layouts, outputs, jit::reduce_limits_for(arch));
      // The executor stops at a stage with nothing to do.
      for (jit::GeneratedKernel& k : jit::generate_reduce(spec)) {
        if (k.blocks == 0) break;
        kernels.push_back(std::move(k));
      }
    } else if (step.kind == StepKind::fused && numel(step.domain) > 0) {
      kernels.push_back(jit::generate_fused(jit::make_fused_spec(p, s, step, layouts, outputs)));
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
