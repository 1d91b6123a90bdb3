#include "cuda/executor.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "codegen/fused_spec.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernel_table.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"
#include "runtime/nf_half.h"

namespace nf::cuda {
namespace {

constexpr int kBlock = 256;

// Parameter values for cudaLaunchKernel, kept alive until the launch.
class Args {
 public:
  template <class T>
  void add(const T& v) {
    slots_.emplace_back(sizeof v);
    std::memcpy(slots_.back().data(), &v, sizeof v);
  }
  void add_dims(const Strides& values, bool index64) {
    for (auto v : values) {
      if (!index64 && (v > INT32_MAX || v < INT32_MIN)) {
        throw InternalError("executor: a 32-bit kernel got the extent " + std::to_string(v));
      }
    }
    std::vector<char> s(values.size() * (index64 ? 8 : 4));
    for (std::size_t d = 0; d < values.size(); ++d) {
      if (index64) {
        const long long v = values[d];
        std::memcpy(s.data() + d * 8, &v, 8);
      } else {
        const int v = int(values[d]);
        std::memcpy(s.data() + d * 4, &v, 4);
      }
    }
    slots_.push_back(std::move(s));
  }
  // A constant in the compute type of its dtype; an f16 constant holds what
  // f16 can, as on the CPU backend.
  void add_scalar(const Node& n) {
    switch (n.dtype) {
      case DType::b8:
        add(static_cast<bool>(n.ivalue != 0));
        break;
      case DType::u8:
        add(static_cast<unsigned char>(n.ivalue));
        break;
      case DType::i32:
        add(static_cast<int>(n.ivalue));
        break;
      case DType::i64:
        add(static_cast<long long>(n.ivalue));
        break;
      case DType::f64:
        add(n.fvalue);
        break;
      case DType::f16:
        add(nf_f16_bits_to_f32(nf_f32_to_f16_bits(float(n.fvalue))));
        break;
      case DType::bf16:
        add(nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(float(n.fvalue))));
        break;
      default:
        add(float(n.fvalue));
        break;
    }
  }
  std::vector<void*> pointers() {
    std::vector<void*> p;
    for (auto& s : slots_) p.push_back(s.data());
    return p;
  }

 private:
  std::vector<std::vector<char>> slots_;
};

class Runner {
 public:
  Runner(const Schedule& s, const std::vector<Array>& outputs, int device)
      : s_(s), outputs_(outputs), device_(device), layouts_(memory_layouts(s, outputs)) {}

  void run() {
    place_values();
    for (const Step& step : s_.steps) launch_fused(step);
  }

 private:
  char* at(const std::shared_ptr<Storage>& storage, std::int64_t offset, DType t) const {
    if (storage->device != Device{Device::Kind::cuda, device_}) {
      throw ValueError("an array on " + to_string(storage->device) +
                       " was used in a statement running on cuda:" + std::to_string(device_) +
                       " (numfuse moves no array between devices by itself)");
    }
    return static_cast<char*>(storage->data) + offset * std::int64_t(itemsize(t));
  }

  // The address of element 0 of each value in memory.
  void place_values() {
    const Program& p = s_.program;
    ptr_.assign(p.nodes.size(), nullptr);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& n = *p.nodes[i];
      switch (s_.home[i]) {
        case Schedule::Home::leaf:
          ptr_[i] = at(n.array->storage(), n.array->offset(), n.dtype);
          break;
        case Schedule::Home::alias:
          ptr_[i] = ptr_[p.inputs[i][0]];
          break;
        case Schedule::Home::step:
          if (s_.root_of[i] >= 0) {
            const Array& out = outputs_[s_.root_of[i]];
            ptr_[i] = at(out.storage(), out.offset(), out.dtype());
          } else {
            temps_.push_back(
                allocate_device(device_, std::size_t(numel(n.shape)) * itemsize(n.dtype)));
            ptr_[i] = static_cast<char*>(temps_.back()->data);
          }
          break;
        case Schedule::Home::none:
          break;
      }
    }
  }

  void* write_pointer(int node) const {
    if (s_.root_of[node] >= 0) {
      const Array& out = outputs_[s_.root_of[node]];
      return at(out.storage(), out.offset(), out.dtype());
    }
    return ptr_[node];
  }

  void launch_fused(const Step& step) {
    const std::int64_t n = numel(step.domain);
    if (n == 0) return;
    const jit::FusedSpec spec = jit::make_fused_spec(s_, step, layouts_, outputs_);
    const jit::GeneratedKernel k = jit::describe_fused(spec);
    const LoadedKernel& kernel = find_or_load(device_, k.signature, k.name,
                                              [&] { return jit::generate_fused(spec).source; });
    Args args;
    for (const jit::KernelParam& param : k.params) {
      switch (param.kind) {
        case jit::KernelParam::Kind::output:
          args.add(write_pointer(step.writes[param.index]));
          break;
        case jit::KernelParam::Kind::input:
          args.add(static_cast<void*>(ptr_[step.reads[param.index]]));
          break;
        case jit::KernelParam::Kind::scalar:
          args.add_scalar(*s_.program.nodes[param.index]);
          break;
        case jit::KernelParam::Kind::seed:
          args.add(s_.program.nodes[param.index]->seed);
          break;
        case jit::KernelParam::Kind::stream:
          args.add(s_.program.nodes[param.index]->stream);
          break;
        case jit::KernelParam::Kind::count:
          if (spec.index64) {
            args.add(static_cast<long long>(n));
          } else {
            args.add(static_cast<int>(n));
          }
          break;
        case jit::KernelParam::Kind::dims:
          args.add_dims(step.domain, spec.index64);
          break;
        case jit::KernelParam::Kind::strides: {
          const std::size_t j = std::size_t(param.index);
          const Layout l =
              j < step.reads.size()
                  ? *layouts_[step.reads[j]]
                  : jit::write_layout(s_, step.writes[j - step.reads.size()], layouts_, outputs_);
          args.add_dims(broadcast_strides(l.shape, l.strides, step.domain), spec.index64);
          break;
        }
      }
    }
    // A grid-stride loop over enough blocks to fill every multiprocessor.
    const std::int64_t work =
        spec.vector_width > 1 ? std::max<std::int64_t>(n / spec.vector_width, 1) : n;
    const std::int64_t most = std::int64_t(device_info(device_).sm_count) * 16;
    const unsigned blocks =
        unsigned(std::clamp<std::int64_t>((work + kBlock - 1) / kBlock, 1, most));
    std::vector<void*> ptrs = args.pointers();
    launch(kernel, device_, dim3(blocks), dim3(kBlock), ptrs.data(), 0);
  }

  const Schedule& s_;
  const std::vector<Array>& outputs_;
  const int device_;
  const std::vector<std::optional<Layout>> layouts_;
  std::vector<char*> ptr_;
  std::vector<std::shared_ptr<Storage>> temps_;  // freed in stream order after the launches
};

}  // namespace

bool runs_on_gpu(const Schedule& s) {
  return std::all_of(s.steps.begin(), s.steps.end(),
                     [](const Step& step) { return step.kind == StepKind::fused; });
}

void run(const Schedule& s, const std::vector<Array>& outputs, int device) {
  Runner(s, outputs, device).run();
}

}  // namespace nf::cuda
