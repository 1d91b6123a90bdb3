#include "api/execute.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

#include "api/kernel_sources.hpp"
#include "api/plan_cache.hpp"
#include "compile/manifest.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cpu/interpreter.hpp"
#include "cuda/executor.hpp"
#include "cuda/memory.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"
#include "plan/schedule.hpp"

namespace nf {
namespace {

bool on_cuda(const Array& a) {
  return a.device().kind == Device::Kind::cuda;
}

// Until matrix products have GPU kernels, a statement that needs one
// runs on the CPU backend over host copies of its device arrays, and its
// results are copied back with a generated kernel.
void run_on_host(const Program& p, std::span<const Array> outputs) {
  std::vector<NodePtr> host(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = *p.nodes[i];
    if (n.op == OpId::leaf && on_cuda(*n.array)) {
      const Array dense = n.array->is_contiguous() ? *n.array : Array(Expr(*n.array));
      Array h = new_array(n.dtype, n.shape, Device::cpu());
      copy_from_array(h.storage()->data, dense);
      host[i] = make_leaf(h);
      continue;
    }
    std::vector<NodePtr> ins;
    for (int j : p.inputs[i]) ins.push_back(host[j]);
    host[i] = ins.empty() ? p.nodes[i] : rebuild(n, std::move(ins));
  }
  std::vector<NodePtr> host_roots;
  std::vector<Array> host_outputs;
  for (std::size_t r = 0; r < p.roots.size(); ++r) {
    const Node& root = *p.nodes[p.roots[r]];
    host_roots.push_back(host[p.roots[r]]);
    host_outputs.push_back(new_array(root.dtype, root.shape, Device::cpu()));
  }
  const Program hp = make_program(host_roots);
  cpu::run(hp, make_schedule(hp, default_schedule_options()), host_outputs);
  for (std::size_t r = 0; r < p.roots.size(); ++r) {
    Array up = new_array(outputs[r].dtype(), outputs[r].shape(), outputs[r].device());
    copy_to_array(up, host_outputs[r].storage()->data);
    execute(make_leaf(up), outputs[r]);
  }
}

void run_on_cuda(const Program& p, std::span<const Array> outputs) {
  const ScheduleOptions options = default_schedule_options();
  const auto plan = cuda_plan(p, outputs, options);
  if (!plan->launches) return run_on_host(p, outputs);
  const int device = outputs[0].device().index;
  if (!writes_where_it_reads_elsewhere(p, plan->schedule, outputs)) {
    return cuda::run(*plan->launches, p, plan->schedule, outputs, device);
  }
  // An output that overlaps an input read at other elements (A += A.T()):
  // compute into new buffers, then copy.
  std::vector<Array> temps;
  for (const Array& o : outputs) temps.push_back(new_array(o.dtype(), o.shape(), o.device()));
  const auto into_temps = cuda_plan(p, temps, options);
  cuda::run(*into_temps->launches, p, into_temps->schedule, temps, device);
  for (std::size_t r = 0; r < outputs.size(); ++r) execute(make_leaf(temps[r]), outputs[r]);
}

// The kernel manifest of a CPU run: the kernels run_on_cuda would load,
// including its detour through new buffers and the copies back.
void record_as_a_gpu_would(const Program& p, const Schedule& s, const std::vector<Array>& outputs) {
  if (!writes_where_it_reads_elsewhere(p, s, outputs)) return record_kernels(p, s, outputs);
  std::vector<Array> temps;
  for (const Array& o : outputs) temps.push_back(planned_array(o.dtype(), o.shape()));
  record_kernels(p, s, temps);
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    const Program copy = make_program({make_leaf(temps[r])});
    record_kernels(copy, make_schedule(copy, default_schedule_options()), {outputs[r]});
  }
}

}  // namespace

void execute(std::span<const NodePtr> roots, std::span<const Array> outputs) {
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (roots[i]->shape != outputs[i].shape() || roots[i]->dtype != outputs[i].dtype()) {
      throw InternalError("execute: root " + std::to_string(i) + " does not match its output");
    }
  }
  if (outputs.empty()) return;
  const Program p = make_program(roots);
  if (on_cuda(outputs[0])) return run_on_cuda(p, outputs);
  const Schedule s = make_schedule(p, default_schedule_options());
  std::vector<Array> outs(outputs.begin(), outputs.end());
  if (jit::manifest_on()) record_as_a_gpu_would(p, s, outs);
  cpu::run(p, s, outs);
}

void execute(const NodePtr& root, const Array& output) {
  execute(std::span<const NodePtr>(&root, 1), std::span<const Array>(&output, 1));
}

Expr within_depth_cap(Expr e) {
  constexpr std::uint32_t kDepthCap = 256;  // ScheduleOptions::max_nodes: one kernel's worth
  if (e.node()->depth < kDepthCap || e.node()->weak) return e;  // scalars stay weak
  return Expr(Array(e));
}

Array new_array(DType dtype, const Shape& shape) {
  return new_array(dtype, shape, default_device());
}

Array new_array(DType dtype, const Shape& shape, Device device) {
  for (auto d : shape) {
    if (d < 0) throw ShapeError("negative dimension in shape " + to_string(shape));
  }
  const std::size_t bytes = static_cast<std::size_t>(numel(shape)) * itemsize(dtype);
  auto storage = device.kind == Device::Kind::cuda ? cuda::allocate_device(device.index, bytes)
                                                   : allocate_host(bytes);
  return Array(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

void copy_to_array(const Array& dst, const void* src) {
  const std::size_t bytes = std::size_t(dst.size()) * itemsize(dst.dtype());
  if (bytes == 0) return;
  char* p =
      static_cast<char*>(dst.storage()->data) + dst.offset() * std::int64_t(itemsize(dst.dtype()));
  if (on_cuda(dst)) {
    cuda::copy_host_to_device(p, src, bytes, dst.device().index);
  } else {
    std::memcpy(p, src, bytes);
  }
}

void copy_from_array(void* dst, const Array& src) {
  const std::size_t bytes = std::size_t(src.size()) * itemsize(src.dtype());
  if (bytes == 0) return;
  const char* p = static_cast<const char*>(src.storage()->data) +
                  src.offset() * std::int64_t(itemsize(src.dtype()));
  if (on_cuda(src)) {
    cuda::copy_device_to_host(dst, p, bytes, src.device().index);
  } else {
    std::memcpy(dst, p, bytes);
  }
}

}  // namespace nf
