#include "codegen/step_kernels.hpp"

#include "codegen/fast_division.hpp"
#include "codegen/reduce_codegen.hpp"
#include "codegen/reduce_walk.hpp"
#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"

namespace nf::jit {

StepKernels::StepKernels(const Program& p, const Schedule& s, const Step& step,
                         const std::vector<std::optional<Layout>>& layouts,
                         const std::vector<Array>& outputs, const ReduceLimits& limits)
    : schedule_(&s), step_(&step), layouts_(&layouts), outputs_(&outputs) {
  if (step.kind == StepKind::reduction) {
    const ReduceSpec& spec =
        spec_.emplace<ReduceSpec>(make_reduce_spec(p, s, step, layouts, outputs, limits));
    for (GeneratedKernel& k : describe_reduce(spec)) {
      // A split row's later stages have nothing to do where its first has
      // no blocks.
      if (k.blocks == 0) break;
      kernels_.push_back(std::move(k));
    }
  } else if (step.kind == StepKind::fused && numel(step.domain) > 0) {
    const FusedSpec& spec = spec_.emplace<FusedSpec>(make_fused_spec(p, s, step, layouts, outputs));
    kernels_.push_back(describe_fused(spec));
  } else if (step.kind == StepKind::gather && numel(step.domain) > 0) {
    const GatherSpec& spec =
        spec_.emplace<GatherSpec>(make_gather_spec(p, s, step, layouts, outputs));
    kernels_.push_back(describe_gather(spec));
  }
}

std::string StepKernels::source(std::size_t i) const {
  if (const ReduceSpec* r = reduce_spec()) return generate_reduce(*r).at(i).source;
  if (const GatherSpec* g = std::get_if<GatherSpec>(&spec_)) return generate_gather(*g).source;
  return generate_fused(std::get<FusedSpec>(spec_)).source;
}

std::vector<GeneratedKernel> StepKernels::generated() const {
  std::vector<GeneratedKernel> out;
  if (kernels_.empty()) return out;
  if (const ReduceSpec* r = reduce_spec()) {
    out = generate_reduce(*r);
    out.resize(kernels_.size());
  } else if (const GatherSpec* g = std::get_if<GatherSpec>(&spec_)) {
    out.push_back(generate_gather(*g));
  } else {
    out.push_back(generate_fused(std::get<FusedSpec>(spec_)));
  }
  return out;
}

bool StepKernels::index64() const {
  if (const ReduceSpec* r = reduce_spec()) return r->index64;
  if (const FusedSpec* f = std::get_if<FusedSpec>(&spec_)) return f->index64;
  if (const GatherSpec* g = std::get_if<GatherSpec>(&spec_)) return g->index64;
  return false;
}

Strides StepKernels::fixed_values(std::size_t i, const KernelParam& param) const {
  const GeneratedKernel& k = kernels_.at(i);
  switch (param.kind) {
    case KernelParam::Kind::extent:
      return k.extents.at(param.index);
    case KernelParam::Kind::count:
      return {numel(step_->domain)};
    case KernelParam::Kind::dims: {
      const FusedSpec* f = std::get_if<FusedSpec>(&spec_);
      if (f && f->collapsed && param.index == 1) return walk_dims_values(tile_grid(*f), f->index64);
      if (f && f->collapsed) return walk_dims_values(f->walk_dims, f->index64);
      return step_->domain;
    }
    case KernelParam::Kind::strides: {
      // A fused kernel's strides are each operand's (reads, then writes)
      // broadcast over the domain, or a read's over the collapsed dims.
      const std::size_t j = std::size_t(param.index);
      const std::size_t reads = step_->reads.size();
      const FusedSpec* f = std::get_if<FusedSpec>(&spec_);
      if (f && f->collapsed && j < reads) return f->walk_strides[j];
      const Layout l =
          j < reads ? *(*layouts_)[step_->reads[j]]
                    : write_layout(*schedule_, step_->writes[j - reads], *layouts_, *outputs_);
      return broadcast_strides(l.shape, l.strides, step_->domain);
    }
    default:
      throw InternalError("StepKernels: a parameter bound at each run has no fixed values");
  }
}

namespace {

// Reductions that read less stay in one kernel with their broadcast back:
// the launch of a kernel more weighs as much as it saves. At 4 MiB on an
// H100, x - mean(x, 0) of (131072, 8) floats went from 7.2 to 9.9 us
// wall cut, of (128, 128, 128) halves over (0, 1) from 14.0 to 10.9; at
// 16 MiB, of (2895, 2895) halves from 25.6 to 16.5 (bench/RESULTS.md,
// 2026-11-27).
constexpr std::int64_t kApartFrom = 8 << 20;

}  // namespace

Schedule kernel_schedule(const Program& p, std::span<const Array> outputs, ScheduleOptions options,
                         const ReduceLimits& limits) {
  Schedule s = make_schedule(p, options);
  // Code generation takes the outputs as a vector; a plan-cache miss can afford the copy.
  const std::vector<Array> outs(outputs.begin(), outputs.end());
  const auto layouts = memory_layouts(p, s, outs);
  const std::size_t asked = options.apart.size();
  for (const Step& step : s.steps) {
    if (step.kind != StepKind::reduction) continue;
    const ReduceSpec spec = make_reduce_spec(p, s, step, layouts, outs, limits);
    if (!writes_elements(spec) || read_bytes(spec) < kApartFrom || !spec.walk->stores_apart(spec)) {
      continue;
    }
    for (int i : step.nodes) {
      if (op_kind(p.nodes[i]->op) == OpKind::reduction) options.apart.push_back(i);
    }
  }
  return options.apart.size() == asked ? s : make_schedule(p, options);
}

std::vector<GeneratedKernel> plan_kernels(const Program& p, const Schedule& s,
                                          const std::vector<Array>& outputs,
                                          const std::string& arch) {
  std::vector<GeneratedKernel> kernels;
  const auto layouts = memory_layouts(p, s, outputs);
  const ReduceLimits limits = reduce_limits_for(arch);
  for (const Step& step : s.steps) {
    for (GeneratedKernel& k : StepKernels(p, s, step, layouts, outputs, limits).generated()) {
      kernels.push_back(std::move(k));
    }
  }
  return kernels;
}

}  // namespace nf::jit
