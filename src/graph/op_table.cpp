#include "graph/op_table.hpp"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {
namespace {

constexpr OpInfo kOps[] = {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) \
  {#name, OpKind::elementwise, arity, ResultRule::rule, Accepts::accepts},
#define NF_REDUCTION(name, rule, accepts, ...) \
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

namespace {

struct TermInfo {
  std::string_view name;
  Centre centre;
};

constexpr TermInfo kTerms[] = {
#define NF_TERM(name, centre) {#name, Centre::centre},
#include "graph/ops.def"
};

// A reduction's row: its passes' terms (one or two) and its finish.
struct ReductionInfo {
  OpId op;
  TermKind passes[2];
  int count;
  std::string_view finish;
};

constexpr ReductionInfo reduction_row(OpId op, std::initializer_list<TermKind> passes,
                                      std::string_view finish) {
  ReductionInfo r{op, {}, int(passes.size()), finish};
  int i = 0;
  for (TermKind k : passes) r.passes[i++] = k;
  return r;
}

#define NF_TERM_KIND(term) TermKind::term
constexpr ReductionInfo kReductions[] = {
#define NF_REDUCTION(name, rule, accepts, form, passes, finish) \
  reduction_row(OpId::name, {NF_EACH_PASS(NF_TERM_KIND, passes)}, #finish),
#include "graph/ops.def"
#undef NF_TERM_KIND
};

const ReductionInfo& reduction_info(OpId op) {
  for (const ReductionInfo& r : kReductions) {
    if (r.op == op) return r;
  }
  throw InternalError("not a reduction: " + std::string(op_name(op)));
}

constexpr bool kReducesOwnResults[] = {
#define NF_ELEMENTWISE(name, ...) false,
#define NF_REDUCTION(name, rule, accepts, form, passes, finish) \
  std::string_view(#finish) == "nf_finish_value" || std::string_view(#finish) == "nf_finish_mean",
#define NF_STRUCTURAL(name, ...) false,
#include "graph/ops.def"
};

}  // namespace

bool reduces_own_results(OpId op) {
  return kReducesOwnResults[std::size_t(op)];
}

std::string_view term_name(TermKind k) {
  return kTerms[std::size_t(k)].name;
}

Centre term_centre(TermKind k) {
  return kTerms[std::size_t(k)].centre;
}

bool centred_on_first(TermKind k, bool held) {
  return !held && term_centre(k) == Centre::mean;
}

std::span<const TermKind> reduction_passes(OpId op) {
  const ReductionInfo& r = reduction_info(op);
  return {r.passes, std::size_t(r.count)};
}

std::string_view reduction_finish(OpId op) {
  return reduction_info(op).finish;
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
