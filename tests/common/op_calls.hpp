// The op table (src/graph/ops.def) as numfuse's public functions: one row per
// elementwise op and per reduction, each calling nf::<name>. A row without a
// public function of its name does not compile, and a new row reaches every
// test that walks these tables without a change there.
#pragma once

#include <string_view>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace nf::test {

struct ElementwiseCall {
  std::string_view name;
  int arity;
  Expr (*call)(const std::vector<Expr>& operands);
};

struct ReductionCall {
  std::string_view name;
  Expr (*call)(const Expr& x, const Axes& axes, int ddof);
  bool single_axis;  // one axis or all of them (argmax, argmin)
  bool takes_ddof;   // var, std
};

const std::vector<ElementwiseCall>& elementwise_calls();
const std::vector<ReductionCall>& reduction_calls();
// The row of that name; std::logic_error where there is none.
const ElementwiseCall& elementwise_call(std::string_view name);
const ReductionCall& reduction_call(std::string_view name);

}  // namespace nf::test
