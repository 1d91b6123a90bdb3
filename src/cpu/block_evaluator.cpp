#include "cpu/block_evaluator.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/shape_util.hpp"
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "numfuse/errors.hpp"

namespace nf::cpu {
namespace {

Value view(const Value& v, Shape shape, Strides strides) {
  Value out = v;
  out.shape = std::move(shape);
  out.strides = std::move(strides);
  return out;
}

// Box b of a reshape of `in` to `shape`: each element found by its C-order
// index (a block of the reshape is no block of its input), its bytes copied
// as stored, then loaded as a whole.
Value gather_reshape(const Array& in, const Shape& shape, const Box& b) {
  const Strides cs = contiguous_strides(shape), in_cs = contiguous_strides(in.shape());
  const Shape bs = b.shape();
  const std::size_t size = itemsize(in.dtype());
  const auto raw = allocate_host(std::size_t(numel(bs)) * size);
  const char* src = static_cast<const char*>(in.storage()->data);
  char* dst = static_cast<char*>(raw->data);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) base += b.lo[d] * cs[d];
  for_each_row<1>(bs, {&cs}, [&](std::int64_t first, const auto& off, const auto&, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t lin = base + off[0] + i, at = in.offset();
      for (std::size_t d = 0; d < in_cs.size(); ++d) {
        at += (lin / in_cs[d]) * in.strides()[d];
        lin %= in_cs[d];
      }
      std::memcpy(dst + (first + i) * size, src + at * std::int64_t(size), size);
    }
  });
  return load(Array(raw, in.dtype(), bs, contiguous_strides(bs), 0));
}

}  // namespace

Array sub_array(const Array& a, const Box& b) {
  std::int64_t offset = a.offset();
  for (std::size_t d = 0; d < b.lo.size(); ++d) offset += b.lo[d] * a.strides()[d];
  return Array(a.storage(), a.dtype(), b.shape(), a.strides(), offset);
}

Array host_array(DType dtype, const Shape& shape) {
  return Array(allocate_host(std::size_t(numel(shape)) * itemsize(dtype)), dtype, shape,
               contiguous_strides(shape), 0);
}

std::vector<int> nodes_to_compute(const Program& p, const std::vector<int>& targets,
                                  const std::vector<bool>& computed, const Memory& mem) {
  std::vector<bool> want(p.nodes.size(), false);
  std::vector<int> stack;
  auto visit = [&](int i) {
    if (want[i] || (!computed[i] && mem[i])) return;
    want[i] = true;
    stack.push_back(i);
  };
  for (int t : targets) visit(t);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    for (int j : p.inputs[i]) visit(j);
  }
  std::vector<int> out;
  for (int i = 0; i < int(p.nodes.size()); ++i) {
    if (want[i]) out.push_back(i);
  }
  return out;
}

Box BlockEvaluator::box_of(int i) const {
  return project(box_, p_.nodes[i]->shape);
}

void BlockEvaluator::compute(const std::vector<int>& nodes) {
  for (int i : nodes) values_[i] = evaluate(i);
}

void BlockEvaluator::write_into(int i, Value target) {
  into_node_ = i;
  into_ = std::move(target);
}

const Value& BlockEvaluator::value(int i) {
  Value& v = values_[i];
  if (!v.storage) {
    if (!mem_[i]) {
      throw InternalError("cpu: node " + std::to_string(i) + " is neither computed nor in memory");
    }
    // Read where it lies: a copy of each block first cost a sum of an f32
    // array as much again as the sum.
    v = view_or_load(sub_array(*mem_[i], box_of(i)));
  }
  return v;
}

Value BlockEvaluator::evaluate(int i) {
  const Node& n = *p_.nodes[i];
  const auto& ins = p_.inputs[i];
  switch (op_kind(n.op)) {
    case OpKind::constant:
      return constant(n.value, n.dtype);
    case OpKind::iota:
      return iota(box_of(i), n.axis, n.dtype);
    case OpKind::random:
      return random(n.op, n.shape, box_of(i), n.dtype, n.seed, n.stream);
    case OpKind::cast:
      return cast(value(ins[0]), n.dtype);
    case OpKind::elementwise: {
      std::vector<Value> args;
      for (int j : ins) args.push_back(value(j));
      return elementwise(n.op, box_of(i).shape(), compute_type(n.dtype), args,
                         i == into_node_ ? &into_ : nullptr);
    }
    case OpKind::reduction:
      return reduce(n.op, value(ins[0]), n.axes, n.ddof, compute_type(n.dtype));
    case OpKind::view: {
      const Box b = box_of(i);
      if (n.op == OpId::broadcast) {
        const Value& x = value(ins[0]);
        return view(x, b.shape(), broadcast_strides(x.shape, x.strides, b.shape()));
      }
      // Reshapes and permutes read memory: the schedule puts their inputs there.
      const Array& in = *mem_[ins[0]];
      if (n.op == OpId::reshape) return gather_reshape(in, n.shape, b);
      Strides s(n.axes.size());
      for (std::size_t d = 0; d < n.axes.size(); ++d) s[d] = in.strides()[n.axes[d]];
      return load(sub_array(Array(in.storage(), in.dtype(), n.shape, s, in.offset()), b));
    }
    default:
      break;
  }
  throw InternalError("cpu: cannot evaluate op " + std::string(op_name(n.op)) + " in a block");
}

}  // namespace nf::cpu
