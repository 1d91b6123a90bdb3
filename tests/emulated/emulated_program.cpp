#include "emulated_program.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "api/execute.hpp"
#include "codegen/kernel_arguments.hpp"
#include "codegen/step_kernels.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "graph/build.hpp"
#include "kernel_emulator.hpp"
#include "plan/memory_layout.hpp"
#include "plan/program.hpp"

namespace nf::test {
namespace {

// Each kernel is compiled once a process: the host compiler takes a second.
const EmulatedKernel& compiled(const jit::GeneratedKernel& k) {
  static std::map<std::string, std::unique_ptr<EmulatedKernel>> kernels;
  std::unique_ptr<EmulatedKernel>& slot = kernels[k.name + "/" + std::to_string(k.cluster)];
  if (!slot) slot = std::make_unique<EmulatedKernel>(k.source, k.name, k.cluster);
  return *slot;
}

char* address(const std::shared_ptr<Storage>& storage, std::int64_t offset, DType t) {
  if (storage->device != Device::cpu()) {
    throw std::invalid_argument("emulator: an array on " + to_string(storage->device) +
                                "; emulated statements run over host arrays");
  }
  return static_cast<char*>(storage->data) + offset * std::int64_t(itemsize(t));
}

// The executor's Runner, over host memory and emulated kernels.
class Runner final : public jit::ValueAddresses {
 public:
  Runner(const Program& p, const Schedule& s, std::span<const Array> outputs,
         const jit::ReduceLimits& limits)
      : p_(p), s_(s), outputs_(outputs.begin(), outputs.end()), limits_(limits) {}

  std::vector<EmulatedStep> run() {
    place_values();
    const auto layouts = memory_layouts(p_, s_, outputs_);
    std::vector<EmulatedStep> steps;
    for (const Step& step : s_.steps) steps.push_back(run(step, layouts));
    return steps;
  }

 private:
  void place_values() {
    ptr_.assign(p_.nodes.size(), nullptr);
    for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
      const Node& n = *p_.nodes[i];
      switch (s_.home[i]) {
        case Schedule::Home::leaf:
          ptr_[i] = address(n.array->storage(), n.array->offset(), n.dtype);
          break;
        case Schedule::Home::alias:
          ptr_[i] = ptr_[p_.inputs[i][0]];
          break;
        case Schedule::Home::step:
          if (s_.root_of[i] >= 0) {
            const Array& out = outputs_[s_.root_of[i]];
            ptr_[i] = address(out.storage(), out.offset(), out.dtype());
          } else {
            temps_.push_back(allocate_host(std::size_t(numel(n.shape)) * itemsize(n.dtype)));
            ptr_[i] = static_cast<char*>(temps_.back()->data);
          }
          break;
        case Schedule::Home::none:
          break;
      }
    }
  }

  void* read(int node) const override { return ptr_[node]; }
  // A root is written to its output, wherever else it lives.
  void* write(int node) const override {
    if (s_.root_of[node] >= 0) {
      const Array& out = outputs_[s_.root_of[node]];
      return address(out.storage(), out.offset(), out.dtype());
    }
    return ptr_[node];
  }

  EmulatedStep run(const Step& step, const std::vector<std::optional<Layout>>& layouts) {
    EmulatedStep out{step.kind};
    if (step.kind == StepKind::gemm) {
      throw std::invalid_argument("emulator: products (gemm steps) are not emulated");
    }
    const jit::StepKernels kernels(p_, s_, step, layouts, outputs_, limits_);
    if (const jit::ReduceSpec* spec = kernels.reduce_spec()) {
      out.cluster = spec->cluster;
      out.prefetch = spec->prefetch;
      out.per = spec->per;
      out.shared = spec->shared;
      out.words = spec->words;
      out.staged = spec->staged;
      out.reverse = spec->reverse;
      out.vec = spec->vec;
      out.shifted = spec->shifted;
      out.covered = spec->covered;
      out.pairs = spec->pairs;
      out.run_lanes = spec->run_lanes;
    }
    const std::vector<jit::GeneratedKernel> generated = kernels.generated();
    std::vector<std::shared_ptr<Storage>> scratch;
    std::vector<void*> workspaces;
    for (std::size_t i = 0; i < generated.size(); ++i) {
      const jit::GeneratedKernel& k = generated[i];
      if (workspaces.empty()) {
        for (std::size_t bytes : k.workspace_bytes) {
          scratch.push_back(allocate_host(bytes));
          workspaces.push_back(scratch.back()->data);
        }
      }
      const jit::ArgumentLayout layout = jit::lay_out_arguments(kernels, i);
      std::vector<std::uint64_t> words = layout.words;
      jit::bind_arguments(layout, words.data(), p_, step, *this, workspaces);
      std::vector<void*> pointers;
      for (std::uint32_t slot : layout.slots) pointers.push_back(words.data() + slot);
      // A kernel that loops over tiles gets fewer blocks than tiles, as on
      // a device with few SMs, so that its blocks take several each.
      const std::int64_t blocks =
          k.loops_over_tiles ? std::min<std::int64_t>(k.blocks, 3) : k.blocks;
      compiled(k).launch(unsigned(blocks), unsigned(k.threads), pointers.data(), k.shared_bytes);
      ++out.kernels;
    }
    return out;
  }

  const Program& p_;
  const Schedule& s_;
  const std::vector<Array> outputs_;
  const jit::ReduceLimits& limits_;
  std::vector<char*> ptr_;
  std::vector<std::shared_ptr<Storage>> temps_;
};

}  // namespace

EmulatedRun run_emulated(std::span<const NodePtr> roots, std::span<const Array> outputs,
                         const jit::ReduceLimits& limits) {
  EmulatedRun run;
  if (outputs.empty()) return run;
  const Program p = make_program(roots);
  const Schedule s = jit::kernel_schedule(p, outputs, default_schedule_options(), limits);
  if (!writes_where_it_reads_elsewhere(p, s, outputs)) {
    run.steps = Runner(p, s, outputs, limits).run();
    return run;
  }
  // As run_on_cuda: compute into new buffers, then copy each into its
  // output with a statement of its own.
  run.detoured = true;
  std::vector<Array> temps;
  for (const Array& o : outputs) temps.push_back(new_array(o.dtype(), o.shape(), Device::cpu()));
  run.steps = Runner(p, s, temps, limits).run();
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    const NodePtr leaf = make_leaf(temps[r]);
    run_emulated(std::span<const NodePtr>(&leaf, 1), outputs.subspan(r, 1), limits);
  }
  return run;
}

std::vector<Array> emulate(const std::vector<Expr>& roots, std::vector<Array> outputs,
                           const jit::ReduceLimits& limits, EmulatedRun* run) {
  std::vector<NodePtr> nodes;
  for (const Expr& e : roots) {
    nodes.push_back(e.node());
    if (outputs.size() < roots.size()) {
      outputs.push_back(new_array(e.dtype(), e.shape(), Device::cpu()));
    }
  }
  const EmulatedRun r = run_emulated(nodes, outputs, limits);
  if (run) *run = r;
  return outputs;
}

jit::ReduceLimits sm90_reduce_limits() {
  return jit::reduce_limits_for("sm_90", jit::ReduceLimits{});
}

}  // namespace nf::test
