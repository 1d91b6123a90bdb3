// Op identities and properties, generated from ops.def.
#pragma once

#include <cstdint>
#include <span>
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
  gather,
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

// What reductions accumulate: a monoid each (NF_TERM rows of ops.def,
// nf_<name>_term in jit/runtime/nf_reduce.h).
enum class TermKind : std::uint8_t {
#define NF_TERM(name, centre) name,
#include "graph/ops.def"
};
// What a term of a second pass deviates from: nothing, or the first pass's
// result (its mean, or its value).
enum class Centre : std::uint8_t { none, mean, value };

std::string_view term_name(TermKind k);
Centre term_centre(TermKind k);
// Whether term k deviates from the mean of its output's first
// kCentreElements elements (in C order along the reduced axes), in the pass
// of the term before it, rather than from that term's mean in a pass of its
// own: unless the walk holds the elements where a second pass costs little
// (`held`), it would read them from memory again, or cost a second meeting
// of many threads or of a cluster's blocks. A few
// elements rather than one keep an outlier first element from multiplying
// the rounding error of var's one pass (by 1 + (centre - mean)^2 / var).
bool centred_on_first(TermKind k, bool held);
constexpr int kCentreElements = 8;
// The terms reduction `op` accumulates, one per pass over its elements, and
// the name of the function that finishes it (NF_REDUCTION's passes, finish).
std::span<const TermKind> reduction_passes(OpId op);
std::string_view reduction_finish(OpId op);

// Whether reduction `op` finishes as its accumulated value or that over the
// count (sum, prod, mean, min, max, any, all): over one element it gives
// that element, and over partial results of its own, its result.
bool reduces_own_results(OpId op);

// For consumers of ops.def: f applied to each term of a row's passes, (a)
// or (a, b), separated by commas.
#define NF_EACH_PASS(f, passes) NF_EACH_PASS_(f, NF_UNPAREN_ passes)
#define NF_UNPAREN_(...) __VA_ARGS__
#define NF_EACH_PASS_(f, ...) \
  NF_PICK_PASS_(__VA_ARGS__, NF_EACH_PASS_2, NF_EACH_PASS_1)(f, __VA_ARGS__)
#define NF_PICK_PASS_(a, b, pick, ...) pick
#define NF_EACH_PASS_1(f, a) f(a)
#define NF_EACH_PASS_2(f, a, b) f(a), f(b)

// numpy's float for a dtype: floats stay, u8/bool -> f16, i32/i64 -> f64.
DType floating_dtype(DType t);
// The dtype op `op` casts its operands to, and the dtype it produces, when its
// inputs promote to `p`. Throws DTypeError when the op does not accept `p`.
DType operand_dtype(OpId op, DType p);
DType result_dtype(OpId op, DType p);

}  // namespace nf
