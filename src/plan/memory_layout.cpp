#include "plan/memory_layout.hpp"

#include <algorithm>

#include "core/shape_util.hpp"
#include "core/storage.hpp"

namespace nf {

bool Layout::contiguous() const {
  std::int64_t expect = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (shape[i] == 0) return true;
    if (strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

bool Layout::beyond_int32() const {
  return nf::beyond_int32(shape, strides, offset);
}

bool beyond_int32(const Shape& shape, const Strides& strides, std::int64_t offset) {
  std::int64_t reach = offset < 0 ? -offset : offset;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    // The stride of an axis of one element is never used (and may be any value).
    if (shape[d] > 1) reach += (strides[d] < 0 ? -strides[d] : strides[d]) * (shape[d] - 1);
  }
  return reach >= (std::int64_t(1) << 31);
}

namespace {

Layout of_array(const Array& a) {
  return {a.dtype(), a.shape(), a.strides(), a.offset()};
}

Layout view_of(const Node& n, const Layout& in) {
  Layout out = in;
  out.dtype = n.dtype;
  out.shape = n.shape;
  if (n.op == OpId::reshape) {
    out.strides = contiguous_strides(n.shape);  // the schedule aliases contiguous inputs only
  } else if (n.op == OpId::broadcast) {
    out.strides = broadcast_strides(in.shape, in.strides, n.shape);
  } else {
    for (std::size_t i = 0; i < n.axes.size(); ++i) out.strides[i] = in.strides[n.axes[i]];
  }
  return out;
}

}  // namespace

std::vector<std::optional<Layout>> memory_layouts(const Program& p, const Schedule& s,
                                                  const std::vector<Array>& outputs) {
  std::vector<std::optional<Layout>> out(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = *p.nodes[i];
    switch (s.home[i]) {
      case Schedule::Home::leaf:
        out[i] = of_array(*n.array);
        break;
      case Schedule::Home::alias:
        out[i] = view_of(n, *out[p.inputs[i][0]]);
        break;
      case Schedule::Home::step:
        out[i] = s.root_of[i] >= 0 ? of_array(outputs[s.root_of[i]])
                                   : Layout{n.dtype, n.shape, contiguous_strides(n.shape), 0};
        break;
      case Schedule::Home::none:
        break;
    }
  }
  return out;
}

bool writes_where_it_reads_elsewhere(const Program& p, const Schedule& s,
                                     std::span<const Array> outputs) {
  // A take reads its array at the places its indices name, not at the
  // elements it writes.
  const bool gathers = std::any_of(p.nodes.begin(), p.nodes.end(),
                                   [](const NodePtr& n) { return n->op == OpId::take; });
  for (const NodePtr& n : p.nodes) {
    if (n->op != OpId::leaf) continue;
    const Array& in = *n->array;
    for (const Array& out : outputs) {
      if (in.storage() != out.storage()) continue;
      const bool same_map = in.offset() == out.offset() && in.shape() == out.shape() &&
                            in.strides() == out.strides() && in.dtype() == out.dtype();
      if (!same_map || gathers || s.steps.size() > 1) return true;
    }
  }
  return false;
}

Array planned_array(DType dtype, const Shape& shape) {
  return Array(std::make_shared<Storage>(), dtype, shape, contiguous_strides(shape), 0);
}

}  // namespace nf
