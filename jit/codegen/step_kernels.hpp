// The one mapping from a plan step to the kernels it launches. The CUDA
// executor, the kernel manifest, nf::plan and kernel_source, the `numfuse`
// tool and the kernel emulator all take a step's kernels from here, so what
// is recorded, shown and emulated is what runs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "codegen/fused_spec.hpp"
#include "codegen/gather_kernel.hpp"
#include "codegen/generated_kernel.hpp"
#include "codegen/reduce_spec.hpp"

namespace nf::jit {

class StepKernels {
 public:
  // The kernels of `step` writing `outputs`, reductions walked as `limits`
  // say (reduce_limits_for the device's arch). Described only: everything
  // but the source, cheap enough for every plan the executor prepares.
  StepKernels(const Program& p, const Schedule& s, const Step& step,
              const std::vector<std::optional<Layout>>& layouts, const std::vector<Array>& outputs,
              const ReduceLimits& limits);

  // In launch order. None for a product (gemm step) or a step over nothing;
  // a split reduction's stages stop at the first with nothing to do.
  const std::vector<GeneratedKernel>& kernels() const { return kernels_; }
  // Kernel i's CUDA source, generated on request: a cache hit needs none.
  std::string source(std::size_t i) const;
  // The kernels with their sources.
  std::vector<GeneratedKernel> generated() const;

  // The values of kernel i's parameter `param` of kind count, dims, strides
  // or extent: the same for every run of the plan.
  Strides fixed_values(std::size_t i, const KernelParam& param) const;
  // 64-bit indices: how count, dims, strides and extents are passed.
  bool index64() const;
  // A reduction step's walk (nullptr for other steps).
  const ReduceSpec* reduce_spec() const { return std::get_if<ReduceSpec>(&spec_); }

 private:
  const Schedule* schedule_;
  const Step* step_;
  const std::vector<std::optional<Layout>>* layouts_;
  const std::vector<Array>* outputs_;
  std::variant<std::monostate, ReduceSpec, FusedSpec, GatherSpec> spec_;
  std::vector<GeneratedKernel> kernels_;
};

// The schedule of `p` writing `outputs` for a GPU whose reductions walk as
// `limits` say: make_schedule's, planned again, where a reduction step
// broadcast back would run faster cut in two (ReduceWalk::stores_apart),
// with its reductions in memory (ScheduleOptions::apart): a kernel for the
// reductions, and an elementwise one that reads them back. Both backends
// plan so, the CPU's for nf::target_arch(), so that they round the same
// intermediates.
Schedule kernel_schedule(const Program& p, std::span<const Array> outputs, ScheduleOptions options,
                         const ReduceLimits& limits);

// The kernels a GPU of `arch` launches for schedule `s` of `p` writing
// `outputs`, in launch order, with their sources: what nf::plan shows, and
// what the CPU backend records in the kernel manifest.
std::vector<GeneratedKernel> plan_kernels(const Program& p, const Schedule& s,
                                          const std::vector<Array>& outputs,
                                          const std::string& arch);

}  // namespace nf::jit
