#include "api/execute.hpp"

#include <optional>
#include <string>
#include <vector>

#include "api/plan_cache.hpp"
#include "api/recording.hpp"
#include "core/shape_util.hpp"
#include "cpu/interpreter.hpp"
#include "cuda/executor.hpp"
#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"
#include "plan/schedule.hpp"

namespace nf {

const Backend& backend_for(Device d) {
  switch (d.kind) {
    case Device::Kind::cpu:
      return cpu::backend();
    case Device::Kind::cuda:
      return cuda::backend();
  }
  throw InternalError("no backend for " + to_string(d));
}

namespace {

// A statement its device's backend cannot run (integer products have no GPU
// kernels yet) runs on the host over copies of its arrays, and its results
// are copied back.
void run_on_host(const Program& p, std::span<const Array> outputs) {
  std::vector<NodePtr> host(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = *p.nodes[i];
    if (n.op == OpId::leaf) {
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
  run_program(make_program(host_roots), host_outputs);
  for (std::size_t r = 0; r < p.roots.size(); ++r) {
    Array up = new_array(outputs[r].dtype(), outputs[r].shape(), outputs[r].device());
    copy_to_array(up, host_outputs[r].storage()->data);
    execute(make_leaf(up), outputs[r]);
  }
}

// Where element 0 of a contiguous array lies.
char* first_byte(const Array& a) {
  return static_cast<char*>(a.storage()->data) + a.offset() * std::int64_t(itemsize(a.dtype()));
}

}  // namespace

void run_program(const Program& p, std::span<const Array> outputs) {
  const Backend& backend = backend_for(outputs[0].device());
  const ScheduleOptions options = default_schedule_options();
  const auto plan = cached_plan(backend, p, outputs, options);
  if (!plan->prepared) return run_on_host(p, outputs);
  if (!writes_where_it_reads_elsewhere(p, plan->schedule, outputs)) {
    return backend.run(*plan->prepared, p, plan->schedule, outputs);
  }
  // An output that overlaps an input read at other elements (A += A.T()):
  // compute into new arrays, then copy.
  std::vector<Array> temps;
  for (const Array& o : outputs) temps.push_back(new_array(o.dtype(), o.shape(), o.device()));
  const auto into_temps = cached_plan(backend, p, temps, options);
  backend.run(*into_temps->prepared, p, into_temps->schedule, temps);
  for (std::size_t r = 0; r < outputs.size(); ++r) execute(make_leaf(temps[r]), outputs[r]);
}

void execute(std::span<const NodePtr> roots, std::span<const Array> outputs) {
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (roots[i]->shape != outputs[i].shape() || roots[i]->dtype != outputs[i].dtype()) {
      throw InternalError("execute: root " + std::to_string(i) + " does not match its output");
    }
  }
  if (outputs.empty()) return;
  const bool gpu = outputs[0].device().kind == Device::Kind::cuda;
  const Program p = make_program(roots, gpu ? ProgramTarget::gpu : ProgramTarget::host);
  if (recording_anywhere()) [[unlikely]] {
    return run_or_record(p, roots, outputs);
  }
  run_program(p, outputs);
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

Device device_of(const Expr& e) {
  const std::optional<Device>& d = e.node()->device;
  return d ? *d : default_device();
}

Array new_array(DType dtype, const Shape& shape, Device device) {
  for (auto d : shape) {
    if (d < 0) throw ShapeError("negative dimension in shape " + to_string(shape));
  }
  const std::size_t bytes = static_cast<std::size_t>(numel(shape)) * itemsize(dtype);
  return Array(backend_for(device).allocate(bytes, device.index), dtype, shape,
               contiguous_strides(shape), 0);
}

void copy_to_array(const Array& dst, const void* src) {
  const std::size_t bytes = std::size_t(dst.size()) * itemsize(dst.dtype());
  if (recording_anywhere()) [[unlikely]] {
    refuse_while_recorded(dst.device(), "an array made from host values",
                          "the values would be read once, now; make the array before recording");
  }
  if (bytes == 0) return;
  backend_for(dst.device()).copy_from_host(first_byte(dst), src, bytes, dst.device().index);
}

void copy_from_array(void* dst, const Array& src) {
  const std::size_t bytes = std::size_t(src.size()) * itemsize(src.dtype());
  if (recording_anywhere()) [[unlikely]] {
    refuse_while_recorded(src.device(), "reading an array's values to the host",
                          "nothing runs while recording; read them after a replay");
  }
  if (bytes == 0) return;
  backend_for(src.device()).copy_to_host(dst, first_byte(src), bytes, src.device().index);
}

}  // namespace nf
