#include "graph/op_table.hpp"

#include <array>
#include <cstddef>

#include "numfuse/errors.hpp"

namespace nf {
namespace {

constexpr OpInfo kOps[] = {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) \
  {#name, OpKind::elementwise, arity, ResultRule::rule, Accepts::accepts},
#define NF_REDUCTION(name, rule, accepts) \
  {#name, OpKind::reduction, 1, ResultRule::rule, Accepts::accepts},
#define NF_STRUCTURAL(name, kind) {#name, OpKind::kind, 0, ResultRule::same, Accepts::any_dtype},
#include "graph/ops.def"
};

}  // namespace

const OpInfo& op_info(OpId op) {
  const auto i = static_cast<std::size_t>(op);
  if (i >= std::size(kOps)) throw InternalError("op_info: op id out of range");
  return kOps[i];
}

DType floating_dtype(DType t) {
  if (is_floating(t)) return t;
  return (t == u8 || t == bool_) ? f16 : f64;
}

DType operand_dtype(OpId op, DType p) {
  const OpInfo& info = op_info(op);
  if (info.accepts == Accepts::numeric && p == bool_) {
    throw DTypeError("nf::" + std::string(info.name) +
                     " does not accept bool operands; convert them with astype first");
  }
  switch (info.rule) {
    case ResultRule::floating:
      return floating_dtype(p);
    case ResultRule::true_divide:
    case ResultRule::average:
      return is_floating(p) ? p : f64;
    case ResultRule::accumulate:  // numpy sums bool and integers in i64
      return is_floating(p) ? p : i64;
    case ResultRule::logical:
      return info.kind == OpKind::reduction ? p : bool_;
    default:
      return p;
  }
}

DType result_dtype(OpId op, DType p) {
  const DType operand = operand_dtype(op, p);
  switch (op_info(op).rule) {
    case ResultRule::compare:
    case ResultRule::logical:
      return bool_;
    case ResultRule::index:
      return i64;
    default:
      return operand;
  }
}

}  // namespace nf
