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
#include "codegen/fused_spec.hpp"
#include "codegen/reduce_codegen.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "graph/build.hpp"
#include "kernel_emulator.hpp"
#include "plan/memory_layout.hpp"
#include "plan/program.hpp"
#include "runtime/nf_half.h"

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

// One 8-byte-aligned slot per kernel parameter holding its value, as the
// executor lays them out.
class Arguments {
 public:
  template <class T>
  void add(const T& v) {
    add_bytes(&v, sizeof v);
  }
  void add_bytes(const void* p, std::size_t n) {
    slots_.emplace_back((n + 7) / 8);
    std::memcpy(slots_.back().data(), p, n);
  }
  void add_extent(const Strides& values, bool index64) {
    std::vector<char> bytes;
    for (std::int64_t v : values) {
      const long long wide = v;
      const int narrow = int(v);
      const char* b =
          index64 ? reinterpret_cast<const char*>(&wide) : reinterpret_cast<const char*>(&narrow);
      bytes.insert(bytes.end(), b, b + (index64 ? 8 : 4));
    }
    add_bytes(bytes.data(), bytes.size());
  }
  // A constant in the compute type of its dtype, rounded as the executor
  // rounds it (Args::set_scalar in src/cuda/executor.cpp).
  void add_scalar(const Node& n) {
    switch (n.dtype) {
      case DType::b8:
        return add(static_cast<bool>(n.ivalue != 0));
      case DType::u8:
        return add(static_cast<unsigned char>(n.ivalue));
      case DType::i32:
        return add(static_cast<int>(n.ivalue));
      case DType::i64:
        return add(static_cast<long long>(n.ivalue));
      case DType::f64:
        return add(n.fvalue);
      case DType::f16:
        return add(nf_f16_bits_to_f32(nf_f32_to_f16_bits(float(n.fvalue))));
      case DType::bf16:
        return add(nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(float(n.fvalue))));
      default:
        return add(float(n.fvalue));
    }
  }
  void** pointers() {
    pointers_.clear();
    for (auto& s : slots_) pointers_.push_back(s.data());
    return pointers_.data();
  }

 private:
  std::vector<std::vector<std::uint64_t>> slots_;
  std::vector<void*> pointers_;
};

// The executor's Runner, over host memory and emulated kernels.
class Runner {
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

  // A root is written to its output, wherever else it lives.
  void* write_pointer(int node) const {
    if (s_.root_of[node] >= 0) {
      const Array& out = outputs_[s_.root_of[node]];
      return address(out.storage(), out.offset(), out.dtype());
    }
    return ptr_[node];
  }

  void bind(Arguments& args, const Step& step, const jit::KernelParam& param,
            const std::vector<void*>& workspaces) const {
    switch (param.kind) {
      case jit::KernelParam::Kind::output:
        return args.add(write_pointer(step.writes[param.index]));
      case jit::KernelParam::Kind::input:
        return args.add(static_cast<void*>(ptr_[step.reads[param.index]]));
      case jit::KernelParam::Kind::scalar:
        return args.add_scalar(*p_.nodes[param.index]);
      case jit::KernelParam::Kind::seed:
        return args.add(p_.nodes[param.index]->seed);
      case jit::KernelParam::Kind::stream:
        return args.add(p_.nodes[param.index]->stream);
      case jit::KernelParam::Kind::workspace:
        return args.add(workspaces.at(param.index));
      default:
        throw std::logic_error("emulator: bind() takes no extents");
    }
  }

  EmulatedStep run(const Step& step, const std::vector<std::optional<Layout>>& layouts) {
    EmulatedStep out{step.kind};
    if (step.kind == StepKind::gemm) {
      throw std::invalid_argument("emulator: products (gemm steps) are not emulated");
    }
    if (step.kind == StepKind::reduction) {
      const jit::ReduceSpec spec = jit::make_reduce_spec(p_, s_, step, layouts, outputs_, limits_);
      out.cluster = spec.cluster;
      out.prefetch = spec.prefetch;
      const std::vector<jit::GeneratedKernel> ks = jit::generate_reduce(spec);
      std::vector<std::shared_ptr<Storage>> scratch;
      std::vector<void*> workspaces;
      for (const jit::GeneratedKernel& k : ks) {
        if (k.blocks == 0) return out;
        if (workspaces.empty()) {
          for (std::size_t bytes : k.workspace_bytes) {
            scratch.push_back(allocate_host(bytes));
            workspaces.push_back(scratch.back()->data);
          }
        }
        Arguments args;
        for (const jit::KernelParam& param : k.params) {
          if (param.kind == jit::KernelParam::Kind::extent) {
            args.add_extent(k.extents[param.index], spec.index64);
          } else if (param.kind == jit::KernelParam::Kind::count) {
            args.add_extent({0}, spec.index64);
          } else {
            bind(args, step, param, workspaces);
          }
        }
        // A kernel that loops over tiles gets fewer blocks than tiles, as on
        // a device with few SMs, so that its blocks take several each.
        const std::int64_t blocks =
            k.loops_over_tiles ? std::min<std::int64_t>(k.blocks, 3) : k.blocks;
        compiled(k).launch(unsigned(blocks), unsigned(k.threads), args.pointers(), k.shared_bytes);
        ++out.kernels;
      }
      return out;
    }
    const std::int64_t count = numel(step.domain);
    if (count == 0) return out;
    const jit::FusedSpec spec = jit::make_fused_spec(p_, s_, step, layouts, outputs_);
    const jit::GeneratedKernel k = jit::generate_fused(spec);
    Arguments args;
    for (const jit::KernelParam& param : k.params) {
      switch (param.kind) {
        case jit::KernelParam::Kind::count:
          args.add_extent({count}, spec.index64);
          break;
        case jit::KernelParam::Kind::dims:
          args.add_extent(step.domain, spec.index64);
          break;
        case jit::KernelParam::Kind::strides: {
          // Each operand's strides (reads, then writes) over the domain.
          const std::size_t j = std::size_t(param.index);
          const Layout l =
              j < step.reads.size()
                  ? *layouts[step.reads[j]]
                  : jit::write_layout(s_, step.writes[j - step.reads.size()], layouts, outputs_);
          args.add_extent(broadcast_strides(l.shape, l.strides, step.domain), spec.index64);
          break;
        }
        case jit::KernelParam::Kind::extent:
          args.add_extent(k.extents[param.index], spec.index64);
          break;
        default:
          bind(args, step, param, {});
      }
    }
    compiled(k).launch(unsigned(k.blocks), unsigned(k.threads), args.pointers(), k.shared_bytes);
    out.kernels = 1;
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
  const Schedule s = make_schedule(p, default_schedule_options());
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
