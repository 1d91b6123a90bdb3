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
#include "codegen/kernel_arguments.hpp"
#include "codegen/step_kernels.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/blas.hpp"
#include "cuda/capture.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernel_table.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"

namespace nf::cuda {

// A kernel of a cached plan, with everything about its arguments that no
// run changes.
struct PreparedKernel {
  const LoadedKernel* kernel = nullptr;
  jit::ArgumentLayout arguments;
  unsigned blocks = 0;
  unsigned threads = 0;
  std::size_t shared_bytes = 0;  // dynamic
};

struct PreparedStep {
  std::vector<PreparedKernel> kernels;       // in launch order; none for an empty domain
  std::vector<std::size_t> workspace_bytes;  // scratch the kernels share
  std::shared_ptr<const GemmPlan> gemm;      // a gemm step's product
};

namespace {

// Everything about a plan's launches that does not change between runs of
// statements with the same key: loaded kernels, their argument layouts and
// grids, and the cuBLASLt plans of its products. A run only binds buffers
// and scalars.
struct Launches final : Prepared {
  std::vector<PreparedStep> steps;  // one per schedule step
};

std::atomic<bool> g_stand_ins{false};

const LoadedKernel& load(int device, const jit::GeneratedKernel& k,
                         const std::function<std::string()>& make_source) {
  static const LoadedKernel stand_in;
  if (g_stand_ins.load(std::memory_order_relaxed)) return stand_in;
  return find_or_load(device, k.signature, k.name, make_source);
}

// The arch a step's kernels are walked for: the device's, or sm_90's where
// stand-in kernels run without one (host_overhead_bench on a machine with
// no GPU).
std::string walk_arch(int device) {
  return g_stand_ins.load(std::memory_order_relaxed) ? "sm_90" : device_info(device).arch();
}

PreparedStep prepare_step(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs, int device) {
  PreparedStep out;
  if (step.kind == StepKind::gemm) {
    const GemmOptions options{p.nodes[step.nodes[0]]->precision, step.bias, step.activation};
    out.gemm = plan_gemm(device, *layouts[step.reads[0]], *layouts[step.reads[1]],
                         jit::write_layout(s, step.writes[0], layouts, outputs), options);
    return out;
  }
  const jit::StepKernels kernels(p, s, step, layouts, outputs,
                                 jit::reduce_limits_for(walk_arch(device)));
  for (std::size_t i = 0; i < kernels.kernels().size(); ++i) {
    const jit::GeneratedKernel& k = kernels.kernels()[i];
    const LoadedKernel& kernel = load(device, k, [&] { return kernels.source(i); });
    PreparedKernel& pk = out.kernels.emplace_back();
    pk.kernel = &kernel;
    pk.arguments = jit::lay_out_arguments(kernels, i);
    pk.blocks = unsigned(std::min<std::int64_t>(k.blocks, std::numeric_limits<int>::max()));
    pk.threads = unsigned(k.threads);
    pk.shared_bytes = k.shared_bytes;
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

// Parameter values for a launch: a copy of a prepared kernel's words, which
// a run's values are then bound into.
class Args {
 public:
  explicit Args(const jit::ArgumentLayout& l) : size_(l.words.size()), words_(size_) {
    std::memcpy(words_.data(), l.words.data(), size_ * sizeof(std::uint64_t));
  }
  std::uint64_t* words() { return words_.data(); }
  std::span<const std::uint64_t> span() { return {words_.data(), size_}; }

 private:
  std::size_t size_;
  SmallArray<std::uint64_t, 48> words_;
};

class Runner final : public jit::ValueAddresses {
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

  void* read(int node) const override { return ptr_[node]; }
  // A root that lives in memory already (a leaf, a view) is copied into its
  // output: a write of a root goes to its output, wherever else it lives.
  void* write(int node) const override {
    if (s_.root_of[node] >= 0) {
      const Array& out = outputs_[s_.root_of[node]];
      return at(out.storage(), out.offset(), out.dtype());
    }
    return ptr_[node];
  }

  void launch(const Step& step, const PreparedStep& prepared) {
    if (prepared.gemm) {
      run_gemm(*prepared.gemm, ptr_[step.reads[0]], ptr_[step.reads[1]], write(step.writes[0]),
               step.bias ? ptr_[step.reads[2]] : nullptr);
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
    Args args(prepared.arguments);
    jit::bind_arguments(prepared.arguments, args.words(), p_, step, *this, workspaces);
    if (g_stand_ins.load(std::memory_order_relaxed)) return;
    cuda::launch(*prepared.kernel, device_, dim3(prepared.blocks), dim3(prepared.threads),
                 args.span(), prepared.arguments.slots, prepared.shared_bytes);
  }

  const Program& p_;
  const Schedule& s_;
  const std::span<const Array> outputs_;
  const int device_;
  SmallArray<char*, 64> ptr_;
  std::vector<std::shared_ptr<Storage>> temps_;  // freed in stream order after the launches
};

class CudaBackend final : public Backend {
 public:
  Schedule schedule(const Program& p, std::span<const Array> outputs,
                    const ScheduleOptions& options) const override {
    return jit::kernel_schedule(p, outputs, options,
                                jit::reduce_limits_for(walk_arch(outputs[0].device().index)));
  }
  // Null where a product has no GPU plan (cuda/blas.hpp says which).
  std::shared_ptr<const Prepared> prepare(const Program& p, const Schedule& s,
                                          std::span<const Array> outputs) const override {
    // Code generation takes the outputs as a vector; a miss can afford the copy.
    const std::vector<Array> outs(outputs.begin(), outputs.end());
    const int device = outputs[0].device().index;
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
  void run(const Prepared& prepared, const Program& p, const Schedule& s,
           std::span<const Array> outputs) const override {
    Runner(p, s, outputs, outputs[0].device().index).run(static_cast<const Launches&>(prepared));
  }
  std::shared_ptr<Storage> allocate(std::size_t bytes, int index) const override {
    return allocate_device(index, bytes);
  }
  void copy_from_host(void* dst, const void* host, std::size_t bytes, int index) const override {
    copy_host_to_device(dst, host, bytes, index);
  }
  void copy_to_host(void* host, const void* src, std::size_t bytes, int index) const override {
    copy_device_to_host(host, src, bytes, index);
  }
  bool keeps_recordings() const override { return true; }
  void begin_recording(int index) const override { begin_capture(index); }
  std::shared_ptr<const Replay> end_recording(int index) const override {
    return end_capture(index);
  }
  void abandon_recording(int index) const override { abandon_capture(index); }
};

}  // namespace

const Backend& backend() {
  static const CudaBackend b;
  return b;
}

void use_stand_in_kernels(bool on) {
  g_stand_ins.store(on, std::memory_order_relaxed);
}

}  // namespace nf::cuda
