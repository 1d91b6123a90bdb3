// The op table (src/graph/ops.def) as the fuzzer calls it: every elementwise
// and reduction row mapped to its public function, so that a new row is
// fuzzed without a change here, and what the fuzzer knows of each op's
// operands (which values suit it, how it grows its operands' magnitudes).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace nf::fuzz {

struct ElementwiseOp {
  std::string_view name;
  int arity;
  std::function<Expr(const std::vector<Expr>&)> call;
};

struct ReductionOp {
  std::string_view name;
  std::function<Expr(const Expr&, const Axes&, int ddof)> call;
  bool single_axis;  // one axis or all of them (argmax, argmin)
  bool takes_ddof;   // var, std
};

const std::vector<ElementwiseOp>& elementwise_ops();
const std::vector<ReductionOp>& reduction_ops();
const ElementwiseOp& elementwise_op(std::string_view name);
const ReductionOp& reduction_op(std::string_view name);

// Which values an operand gets (before rounding to its dtype).
enum class Domain {
  any,       // [-3, 3] in steps of 1/8; integers in [-5, 5], u8 in [0, 9]
  positive,  // [1/4, 3]; integers in [1, 5]
  unit,      // [-7/8, 7/8]; integers in [-1, 1]
  small,     // [-2, 2]
  nonzero,   // +-[1/2, 3]; integers +-[1, 5]
  base,      // power's base: [1/2, 2]; integers in [-3, 3]
  exponent,  // power's exponent: [-2, 2] in steps of 1/4; integers in [0, 3]
  near_one,  // prod's operand: [3/4, 5/4] in steps of 1/16; integers -1 or 1
  low,       // clip's lower bound: [-2, -1/2]; integers in [-3, -1]
  high,      // clip's upper bound: [1/2, 2]; integers in [1, 3]
  special,   // any, with NaN and infinities among them (floating dtypes)
};
std::string_view name(Domain d);

// What an op wants of operand `i`: the domain of a leaf there, and the
// largest magnitude a computed operand may have (0: only leaves, for ops
// that are discontinuous or defined on part of the line; a computed value
// could fall on either side of a jump on the two backends).
struct OperandRule {
  Domain domain = Domain::any;
  double bound = 0;
};
OperandRule operand_rule(std::string_view op, int i);

// A bound on the magnitude of op's result from bounds on its operands'.
double result_bound(std::string_view op, const std::vector<double>& bounds);

}  // namespace nf::fuzz
