#include "cuda/executor.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "codegen/fused_spec.hpp"
#include "codegen/reduce_codegen.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/blas.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernel_table.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"
#include "runtime/nf_half.h"

namespace nf::cuda {

// A kernel of a cached plan, with everything about its arguments that no
// run changes.
struct PreparedKernel {
  const LoadedKernel* kernel = nullptr;
  // Every parameter in its own 8-byte-aligned slot, as cuLaunchKernel reads
  // them, with the element count, extents and strides written in once; a run
  // copies the words and writes the parameters of `binds` into its copy.
  std::vector<std::uint64_t> words;
  std::vector<std::uint32_t> slots;  // per parameter: its first word
  struct Bind {
    jit::KernelParam::Kind kind;  // output, input, scalar, seed, stream or workspace
    int index;
    std::uint32_t slot;
  };
  std::vector<Bind> binds;
  unsigned blocks = 0;
  unsigned threads = 0;
  std::size_t shared_bytes = 0;  // dynamic
};

struct PreparedStep {
  std::vector<PreparedKernel> kernels;       // in launch order; none for an empty domain
  std::vector<std::size_t> workspace_bytes;  // scratch the kernels share
  std::shared_ptr<const GemmPlan> gemm;      // a gemm step's product
};

struct Launches {
  std::vector<PreparedStep> steps;  // one per schedule step
};

namespace {

std::atomic<bool> g_stand_ins{false};

const LoadedKernel& load(int device, const jit::GeneratedKernel& k,
                         const std::function<std::string()>& make_source) {
  static const LoadedKernel stand_in;
  if (g_stand_ins.load(std::memory_order_relaxed)) return stand_in;
  return find_or_load(device, k.signature, k.name, make_source);
}

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

void append(std::vector<std::uint64_t>& words, const void* bytes, std::size_t size) {
  const std::size_t at = words.size();
  words.resize(at + (size + 7) / 8);
  std::memcpy(words.data() + at, bytes, size);
}

// Lays out the parameters of `k`. `extent_of(param)` gives the values of a
// dims, strides or extent parameter.
template <class ExtentOf>
PreparedKernel lay_out(const LoadedKernel& kernel, const jit::GeneratedKernel& k, bool index64,
                       std::int64_t count, ExtentOf&& extent_of) {
  PreparedKernel pk;
  pk.kernel = &kernel;
  for (const jit::KernelParam& param : k.params) {
    const auto slot = std::uint32_t(pk.words.size());
    pk.slots.push_back(slot);
    switch (param.kind) {
      case jit::KernelParam::Kind::count:
        if (index64) {
          const long long v = count;
          append(pk.words, &v, sizeof v);
        } else {
          const int v = int(count);
          append(pk.words, &v, sizeof v);
        }
        break;
      case jit::KernelParam::Kind::dims:
      case jit::KernelParam::Kind::strides:
      case jit::KernelParam::Kind::extent: {
        const std::vector<char> bytes = extent_bytes(extent_of(param), index64);
        append(pk.words, bytes.data(), bytes.size());
        break;
      }
      default:  // one word each: pointers, scalars, seeds and streams
        pk.binds.push_back({param.kind, param.index, slot});
        pk.words.push_back(0);
        break;
    }
  }
  pk.blocks = unsigned(std::min<std::int64_t>(k.blocks, std::numeric_limits<int>::max()));
  pk.threads = unsigned(k.threads);
  pk.shared_bytes = k.shared_bytes;
  return pk;
}

PreparedStep prepare_step(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs, int device) {
  PreparedStep out;
  if (step.kind == StepKind::gemm) {
    const GemmOptions options{MatmulPrecision(p.nodes[step.nodes[0]]->ivalue), step.bias,
                              step.activation};
    out.gemm = plan_gemm(device, *layouts[step.reads[0]], *layouts[step.reads[1]],
                         jit::write_layout(s, step.writes[0], layouts, outputs), options);
    return out;
  }
  if (step.kind == StepKind::reduction) {
    const jit::ReduceSpec spec = jit::make_reduce_spec(
        p, s, step, layouts, outputs, jit::reduce_limits_for(device_info(device).arch()));
    const std::vector<jit::GeneratedKernel> ks = jit::describe_reduce(spec);
    for (std::size_t stage = 0; stage < ks.size(); ++stage) {
      const jit::GeneratedKernel& k = ks[stage];
      if (k.blocks == 0) return out;
      const LoadedKernel& kernel =
          load(device, k, [&] { return jit::generate_reduce(spec)[stage].source; });
      PreparedKernel& pk = out.kernels.emplace_back(
          lay_out(kernel, k, spec.index64, 0,
                  [&](const jit::KernelParam& param) { return k.extents[param.index]; }));
      if (k.loops_over_tiles && !g_stand_ins.load(std::memory_order_relaxed)) {
        // As many blocks as run at once; each loops over the tiles.
        const int per_sm = occupancy_blocks(kernel, device, k.threads, k.shared_bytes);
        const std::int64_t resident =
            std::int64_t(std::max(per_sm, 1)) * device_info(device).sm_count;
        pk.blocks = unsigned(std::min<std::int64_t>(pk.blocks, resident));
      }
      out.workspace_bytes = k.workspace_bytes;
    }
    return out;
  }
  const std::int64_t count = numel(step.domain);
  if (count == 0) return out;
  const jit::FusedSpec spec = jit::make_fused_spec(p, s, step, layouts, outputs);
  const jit::GeneratedKernel k = jit::describe_fused(spec);
  const LoadedKernel& kernel = load(device, k, [&] { return jit::generate_fused(spec).source; });
  // The fused kernel's dims are the domain's; its strides are each operand's
  // (reads, then writes) broadcast over the domain.
  out.kernels.push_back(
      lay_out(kernel, k, spec.index64, count, [&](const jit::KernelParam& param) -> Strides {
        if (param.kind == jit::KernelParam::Kind::dims) return step.domain;
        const std::size_t j = std::size_t(param.index);
        const Layout l =
            j < step.reads.size()
                ? *layouts[step.reads[j]]
                : jit::write_layout(s, step.writes[j - step.reads.size()], layouts, outputs);
        return broadcast_strides(l.shape, l.strides, step.domain);
      }));
  return out;
}

// `n` values of T on the stack when they fit, as almost every statement's
// do, else on the heap: a run allocates nothing.
template <class T, std::size_t N>
class SmallArray {
 public:
  explicit SmallArray(std::size_t n)
      : data_(n <= N ? inline_ : (heap_ = std::make_unique<T[]>(n)).get()) {}
  SmallArray(const SmallArray&) = delete;
  SmallArray& operator=(const SmallArray&) = delete;
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() { return data_; }

 private:
  T inline_[N];
  std::unique_ptr<T[]> heap_;
  T* data_;
};

// Parameter values for cuLaunchKernel: a copy of a prepared kernel's words,
// and a pointer to each parameter's slot.
class Args {
 public:
  explicit Args(const PreparedKernel& k) : words_(k.words.size()), pointers_(k.slots.size()) {
    std::memcpy(words_.data(), k.words.data(), k.words.size() * sizeof(std::uint64_t));
    for (std::size_t i = 0; i < k.slots.size(); ++i) pointers_[i] = words_.data() + k.slots[i];
  }
  template <class T>
  void set(std::uint32_t slot, const T& v) {
    static_assert(sizeof(T) <= 8);
    std::memcpy(words_.data() + slot, &v, sizeof v);
  }
  // A constant in the compute type of its dtype; an f16 constant holds what
  // f16 can, as on the CPU backend.
  void set_scalar(std::uint32_t slot, const Node& n) {
    switch (n.dtype) {
      case DType::b8:
        return set(slot, static_cast<bool>(n.ivalue != 0));
      case DType::u8:
        return set(slot, static_cast<unsigned char>(n.ivalue));
      case DType::i32:
        return set(slot, static_cast<int>(n.ivalue));
      case DType::i64:
        return set(slot, static_cast<long long>(n.ivalue));
      case DType::f64:
        return set(slot, n.fvalue);
      case DType::f16:
        return set(slot, nf_f16_bits_to_f32(nf_f32_to_f16_bits(float(n.fvalue))));
      case DType::bf16:
        return set(slot, nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(float(n.fvalue))));
      default:
        return set(slot, float(n.fvalue));
    }
  }
  void** pointers() { return pointers_.data(); }

 private:
  // Every parameter takes at least one word, so a kernel whose words fit
  // has pointers that fit too.
  SmallArray<std::uint64_t, 48> words_;
  SmallArray<void*, 48> pointers_;
};

class Runner {
 public:
  Runner(const Program& p, const Schedule& s, std::span<const Array> outputs, int device)
      : p_(p), s_(s), outputs_(outputs), device_(device), ptr_(p.nodes.size()) {}

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
    for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
      const Node& n = *p_.nodes[i];
      ptr_[i] = nullptr;
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

  // A root that lives in memory already (a leaf, a view) is copied into its
  // output: a write of a root goes to its output, wherever else it lives.
  void* write_pointer(int node) const {
    if (s_.root_of[node] >= 0) {
      const Array& out = outputs_[s_.root_of[node]];
      return at(out.storage(), out.offset(), out.dtype());
    }
    return ptr_[node];
  }

  void launch(const Step& step, const PreparedStep& prepared) {
    if (prepared.gemm) {
      run_gemm(*prepared.gemm, ptr_[step.reads[0]], ptr_[step.reads[1]],
               write_pointer(step.writes[0]), step.bias ? ptr_[step.reads[2]] : nullptr);
      return;
    }
    std::vector<void*> workspaces;
    for (std::size_t bytes : prepared.workspace_bytes) {
      temps_.push_back(allocate_device(device_, bytes));
      workspaces.push_back(temps_.back()->data);
    }
    for (const PreparedKernel& k : prepared.kernels) launch(step, k, workspaces);
  }

  void launch(const Step& step, const PreparedKernel& prepared,
              const std::vector<void*>& workspaces) {
    Args args(prepared);
    for (const PreparedKernel::Bind& b : prepared.binds) {
      switch (b.kind) {
        case jit::KernelParam::Kind::output:
          args.set(b.slot, write_pointer(step.writes[b.index]));
          break;
        case jit::KernelParam::Kind::input:
          args.set(b.slot, static_cast<void*>(ptr_[step.reads[b.index]]));
          break;
        case jit::KernelParam::Kind::scalar:
          args.set_scalar(b.slot, *p_.nodes[b.index]);
          break;
        case jit::KernelParam::Kind::seed:
          args.set(b.slot, p_.nodes[b.index]->seed);
          break;
        case jit::KernelParam::Kind::stream:
          args.set(b.slot, p_.nodes[b.index]->stream);
          break;
        case jit::KernelParam::Kind::workspace:
          args.set(b.slot, workspaces[b.index]);
          break;
        case jit::KernelParam::Kind::count:
        case jit::KernelParam::Kind::dims:
        case jit::KernelParam::Kind::strides:
        case jit::KernelParam::Kind::extent:
          break;  // the same for every run: written by lay_out
      }
    }
    if (g_stand_ins.load(std::memory_order_relaxed)) return;
    cuda::launch(*prepared.kernel, device_, dim3(prepared.blocks), dim3(prepared.threads),
                 args.pointers(), prepared.shared_bytes);
  }

  const Program& p_;
  const Schedule& s_;
  const std::span<const Array> outputs_;
  const int device_;
  SmallArray<char*, 64> ptr_;
  std::vector<std::shared_ptr<Storage>> temps_;  // freed in stream order after the launches
};

}  // namespace

std::shared_ptr<const Launches> prepare(const Program& p, const Schedule& s,
                                        std::span<const Array> outputs, int device) {
  // Code generation takes the outputs as a vector; a miss can afford the copy.
  const std::vector<Array> outs(outputs.begin(), outputs.end());
  auto l = std::make_shared<Launches>();
  const auto layouts = memory_layouts(p, s, outs);
  for (const Step& step : s.steps) {
    l->steps.push_back(prepare_step(p, s, step, layouts, outs, device));
    const bool product_taken =
        step.kind != StepKind::gemm || l->steps.back().gemm || numel(step.domain) == 0;
    if (!product_taken) return nullptr;
  }
  return l;
}

void run(const Launches& l, const Program& p, const Schedule& s, std::span<const Array> outputs,
         int device) {
  Runner(p, s, outputs, device).run(l);
}

void use_stand_in_kernels(bool on) {
  g_stand_ins.store(on, std::memory_order_relaxed);
}

}  // namespace nf::cuda
