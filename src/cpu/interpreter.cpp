#include "cpu/interpreter.hpp"

#include <string>

#include "core/shape_util.hpp"
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "numfuse/errors.hpp"

namespace nf::cpu {
namespace {

// A view of `v` with new shape and strides over the same elements.
Value view(const Value& v, Shape shape, Strides strides) {
  Value out = v;
  out.shape = std::move(shape);
  out.strides = std::move(strides);
  return out;
}

Value evaluate(const Node& n, const std::vector<const Value*>& in) {
  switch (op_kind(n.op)) {
    case OpKind::leaf:
      return load(*n.array);
    case OpKind::constant:
      return constant(n.fvalue, n.ivalue, n.dtype);
    case OpKind::iota:
      return iota(n.shape, int(n.ivalue), n.dtype);
    case OpKind::random:
      return random(n.op, n.shape, n.dtype, n.seed, n.stream);
    case OpKind::cast:
      return cast(*in[0], n.dtype);
    case OpKind::elementwise: {
      std::vector<Value> args;
      for (const Value* v : in) args.push_back(*v);
      return elementwise(n.op, n.shape, compute_type(n.dtype), args);
    }
    case OpKind::reduction:
      return reduce(n.op, *in[0], n.axes, n.ivalue, compute_type(n.dtype));
    case OpKind::gemm:
      return matmul(*in[0], *in[1], n.shape);
    case OpKind::view: {
      const Value& x = *in[0];
      if (n.op == OpId::reshape) {
        const Value c = contiguous(x);
        return view(c, n.shape, contiguous_strides(n.shape));
      }
      if (n.op == OpId::broadcast) {
        return view(x, n.shape, broadcast_strides(x.shape, x.strides, n.shape));
      }
      Strides s(n.axes.size());
      for (std::size_t i = 0; i < n.axes.size(); ++i) s[i] = x.strides[n.axes[i]];
      return view(x, n.shape, std::move(s));
    }
  }
  throw InternalError("cpu: cannot evaluate op " + std::string(op_name(n.op)));
}

}  // namespace

void run(const Program& p, const Schedule& plan, const std::vector<Array>& outputs) {
  // Per node: the last node to read it, after which its value is dropped.
  // Roots are kept to the end.
  std::vector<int> last_use(p.nodes.size(), -1);
  for (int i = 0; i < int(p.nodes.size()); ++i) {
    for (int in : p.inputs[i]) last_use[in] = i;
  }
  for (int r : p.roots) last_use[r] = int(p.nodes.size());
  std::vector<Value> values(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    std::vector<const Value*> in;
    for (int j : p.inputs[i]) in.push_back(&values[j]);
    const Node& n = *p.nodes[i];
    values[i] = evaluate(n, in);
    // A stored f16 is an f16, as on the GPU; f64 emulation keeps full precision.
    if (plan.home[i] == Schedule::Home::step && itemsize(n.dtype) == 2 &&
        compute_type(n.dtype) == f32) {
      values[i] = cast(values[i], n.dtype);
    }
    for (int j : p.inputs[i]) {
      if (last_use[j] == int(i)) values[j] = Value{};
    }
  }
  for (std::size_t r = 0; r < p.roots.size(); ++r) store(values[p.roots[r]], outputs[r]);
}

}  // namespace nf::cpu
