#include "cuda/executor.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "codegen/fused_spec.hpp"
#include "codegen/reduce_codegen.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernel_table.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"
#include "runtime/nf_half.h"

namespace nf::cuda {

struct PreparedKernel {
  const LoadedKernel* kernel = nullptr;
  std::vector<jit::KernelParam> params;
  // The values of the extent and stride parameters, in parameter order.
  std::vector<std::vector<char>> extents;
  bool index64 = false;
  std::int64_t count = 0;
  unsigned blocks = 0;
  unsigned threads = 0;
  std::size_t arg_words = 0;  // 8-byte words that hold every parameter
};

struct PreparedStep {
  std::vector<PreparedKernel> kernels;       // in launch order; none for an empty domain
  std::vector<std::size_t> workspace_bytes;  // scratch the kernels share
};

struct Launches {
  std::vector<PreparedStep> steps;  // one per schedule step
};

namespace {

std::vector<char> extent_bytes(const Strides& values, bool index64) {
  std::vector<char> s(values.size() * (index64 ? 8 : 4));
  for (std::size_t d = 0; d < values.size(); ++d) {
    if (index64) {
      const long long v = values[d];
      std::memcpy(s.data() + d * 8, &v, 8);
    } else {
      if (values[d] > INT32_MAX || values[d] < INT32_MIN) {
        throw InternalError("executor: a 32-bit kernel got the extent " +
                            std::to_string(values[d]));
      }
      const int v = int(values[d]);
      std::memcpy(s.data() + d * 4, &v, 4);
    }
  }
  return s;
}

// The values of the fused kernel's dims and strides parameters.
void fused_extents(PreparedKernel& out, const Schedule& s, const Step& step,
                   const std::vector<std::optional<Layout>>& layouts,
                   const std::vector<Array>& outputs) {
  for (const jit::KernelParam& param : out.params) {
    if (param.kind == jit::KernelParam::Kind::dims) {
      out.extents.push_back(extent_bytes(step.domain, out.index64));
    } else if (param.kind == jit::KernelParam::Kind::strides) {
      const std::size_t j = std::size_t(param.index);
      const Layout l =
          j < step.reads.size()
              ? *layouts[step.reads[j]]
              : jit::write_layout(s, step.writes[j - step.reads.size()], layouts, outputs);
      out.extents.push_back(
          extent_bytes(broadcast_strides(l.shape, l.strides, step.domain), out.index64));
    }
  }
}

// The launch shape and argument space of a kernel whose parameters are set.
void finish(PreparedKernel& out, const jit::GeneratedKernel& k) {
  for (const auto& e : out.extents) out.arg_words += (e.size() + 7) / 8;
  out.arg_words += out.params.size();  // every other parameter fits in one word
  out.blocks = unsigned(std::min<std::int64_t>(k.blocks, std::numeric_limits<int>::max()));
  out.threads = unsigned(k.threads);
}

PreparedStep prepare_step(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs, int device) {
  PreparedStep out;
  if (step.kind == StepKind::reduction) {
    const jit::ReduceSpec spec = jit::make_reduce_spec(
        p, s, step, layouts, outputs, jit::reduce_limits_for(device_info(device).arch()));
    const std::vector<jit::GeneratedKernel> ks = jit::describe_reduce(spec);
    for (std::size_t stage = 0; stage < ks.size(); ++stage) {
      const jit::GeneratedKernel& k = ks[stage];
      if (k.blocks == 0) return out;
      PreparedKernel pk;
      pk.kernel = &find_or_load(device, k.signature, k.name,
                                [&] { return jit::generate_reduce(spec)[stage].source; });
      pk.index64 = spec.index64;
      pk.params = k.params;
      for (const jit::KernelParam& param : pk.params) {
        if (param.kind == jit::KernelParam::Kind::extent) {
          pk.extents.push_back(extent_bytes(k.extents[param.index], pk.index64));
        }
      }
      finish(pk, k);
      out.kernels.push_back(std::move(pk));
      out.workspace_bytes = k.workspace_bytes;
    }
    return out;
  }
  PreparedKernel pk;
  pk.count = numel(step.domain);
  if (pk.count == 0) return out;
  const jit::FusedSpec spec = jit::make_fused_spec(p, s, step, layouts, outputs);
  const jit::GeneratedKernel k = jit::describe_fused(spec);
  pk.kernel =
      &find_or_load(device, k.signature, k.name, [&] { return jit::generate_fused(spec).source; });
  pk.index64 = spec.index64;
  pk.params = k.params;
  fused_extents(pk, s, step, layouts, outputs);
  finish(pk, k);
  out.kernels.push_back(std::move(pk));
  return out;
}

// Parameter values for cudaLaunchKernel, each in its own aligned slot. They
// live on the stack when they fit, as almost every kernel's do, so that a
// launch allocates nothing.
class Args {
 public:
  explicit Args(std::size_t words) {
    if (words > kInline) {
      heap_words_.resize(words);
      heap_pointers_.resize(words);  // every parameter takes at least one word
      words_ = heap_words_.data();
      pointers_ = heap_pointers_.data();
    }
  }
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
  template <class T>
  void add(const T& v) {
    static_assert(sizeof(T) <= 8);
    add_bytes(&v, sizeof v);
  }
  void add_bytes(const void* bytes, std::size_t size) {
    void* slot = words_ + used_;
    std::memcpy(slot, bytes, size);
    pointers_[count_++] = slot;
    used_ += (size + 7) / 8;
  }
  // A constant in the compute type of its dtype; an f16 constant holds what
  // f16 can, as on the CPU backend.
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
  void** pointers() { return pointers_; }

 private:
  static constexpr std::size_t kInline = 48;
  std::uint64_t inline_words_[kInline];
  void* inline_pointers_[kInline];
  std::vector<std::uint64_t> heap_words_;
  std::vector<void*> heap_pointers_;
  std::uint64_t* words_ = inline_words_;
  void** pointers_ = inline_pointers_;
  std::size_t used_ = 0;
  std::size_t count_ = 0;
};

class Runner {
 public:
  Runner(const Program& p, const Schedule& s, const std::vector<Array>& outputs, int device)
      : p_(p), s_(s), outputs_(outputs), device_(device) {}

  void run(const Launches& l) {
    place_values();
    for (std::size_t k = 0; k < s_.steps.size(); ++k) launch(s_.steps[k], l.steps[k]);
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
    ptr_.assign(p_.nodes.size(), nullptr);
    for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
      const Node& n = *p_.nodes[i];
      switch (s_.home[i]) {
        case Schedule::Home::leaf:
          ptr_[i] = at(n.array->storage(), n.array->offset(), n.dtype);
          break;
        case Schedule::Home::alias:
          ptr_[i] = ptr_[p_.inputs[i][0]];
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

  void launch(const Step& step, const PreparedStep& prepared) {
    std::vector<void*> workspaces;
    for (std::size_t bytes : prepared.workspace_bytes) {
      temps_.push_back(allocate_device(device_, bytes));
      workspaces.push_back(temps_.back()->data);
    }
    for (const PreparedKernel& k : prepared.kernels) launch(step, k, workspaces);
  }

  void launch(const Step& step, const PreparedKernel& prepared,
              const std::vector<void*>& workspaces) {
    Args args(prepared.arg_words);
    std::size_t extent = 0;
    for (const jit::KernelParam& param : prepared.params) {
      switch (param.kind) {
        case jit::KernelParam::Kind::output:
          args.add(write_pointer(step.writes[param.index]));
          break;
        case jit::KernelParam::Kind::input:
          args.add(static_cast<void*>(ptr_[step.reads[param.index]]));
          break;
        case jit::KernelParam::Kind::scalar:
          args.add_scalar(*p_.nodes[param.index]);
          break;
        case jit::KernelParam::Kind::seed:
          args.add(p_.nodes[param.index]->seed);
          break;
        case jit::KernelParam::Kind::stream:
          args.add(p_.nodes[param.index]->stream);
          break;
        case jit::KernelParam::Kind::workspace:
          args.add(workspaces[param.index]);
          break;
        case jit::KernelParam::Kind::count:
          if (prepared.index64) {
            args.add(static_cast<long long>(prepared.count));
          } else {
            args.add(static_cast<int>(prepared.count));
          }
          break;
        case jit::KernelParam::Kind::dims:
        case jit::KernelParam::Kind::strides:
        case jit::KernelParam::Kind::extent: {
          const std::vector<char>& bytes = prepared.extents[extent++];
          args.add_bytes(bytes.data(), bytes.size());
          break;
        }
      }
    }
    cuda::launch(*prepared.kernel, device_, dim3(prepared.blocks), dim3(prepared.threads),
                 args.pointers(), 0);
  }

  const Program& p_;
  const Schedule& s_;
  const std::vector<Array>& outputs_;
  const int device_;
  std::vector<char*> ptr_;
  std::vector<std::shared_ptr<Storage>> temps_;  // freed in stream order after the launches
};

}  // namespace

bool runs_on_gpu(const Schedule& s) {
  return std::all_of(s.steps.begin(), s.steps.end(),
                     [](const Step& step) { return step.kind != StepKind::gemm; });
}

std::shared_ptr<const Launches> prepare(const Program& p, const Schedule& s,
                                        const std::vector<Array>& outputs, int device) {
  auto l = std::make_shared<Launches>();
  const auto layouts = memory_layouts(p, s, outputs);
  for (const Step& step : s.steps)
    l->steps.push_back(prepare_step(p, s, step, layouts, outputs, device));
  return l;
}

void run(const Launches& l, const Program& p, const Schedule& s, const std::vector<Array>& outputs,
         int device) {
  Runner(p, s, outputs, device).run(l);
}

}  // namespace nf::cuda
