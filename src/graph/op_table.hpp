// Op identities and properties, generated from ops.def.
#pragma once

#include <cstdint>
#include <string_view>

#include "numfuse/dtype.hpp"

namespace nf {

enum class OpId : std::uint16_t {
#define NF_ELEMENTWISE(name, ...) name,
#define NF_REDUCTION(name, ...) name,
#define NF_STRUCTURAL(name, ...) name,
#include "graph/ops.def"
};

enum class OpKind : std::uint8_t {
  leaf,
  constant,
  iota,
  random,
  cast,
  view,
  gemm,
  elementwise,
  reduction
};

// How operand and result dtypes follow from the promoted dtype p of an op's
// inputs. Operands are cast to the operand dtype before the op computes.
enum class ResultRule : std::uint8_t {
  same,         // operands p, result p
  floating,     // operands and result: p if floating, else numpy's float for p
  true_divide,  // operands and result: p if floating, else f64
  compare,      // operands p, result bool
  logical,      // operands bool, result bool
  select,       // where(): condition bool, values p, result p
  accumulate,   // reductions: bool and integers accumulate in i64
  average,      // reductions: bool and integers give f64
  index,        // reductions: result i64
};

enum class Accepts : std::uint8_t { any_dtype, numeric };

struct OpInfo {
  std::string_view name;
  OpKind kind;
  int arity;  // elementwise ops; 0 for the rest
  ResultRule rule;
  Accepts accepts;
};

const OpInfo& op_info(OpId op);
inline std::string_view op_name(OpId op) {
  return op_info(op).name;
}
inline OpKind op_kind(OpId op) {
  return op_info(op).kind;
}

// numpy's float for a dtype: floats stay, u8/bool -> f16, i32/i64 -> f64.
DType floating_dtype(DType t);
// The dtype op `op` casts its operands to, and the dtype it produces, when its
// inputs promote to `p`. Throws DTypeError when the op does not accept `p`.
DType operand_dtype(OpId op, DType p);
DType result_dtype(OpId op, DType p);

}  // namespace nf
