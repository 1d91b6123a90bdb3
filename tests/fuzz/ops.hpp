// The op table (src/graph/ops.def) as the fuzzer calls it: every elementwise
// and reduction row (tests/common/op_calls.hpp), so that a new row is fuzzed
// without a change here, and what the fuzzer knows of each op's operands
// (which values suit it, how it grows its operands' magnitudes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "op_calls.hpp"

namespace nf::fuzz {

// The op table's rows, as tests/common calls them.
using ElementwiseOp = nf::test::ElementwiseCall;
using ReductionOp = nf::test::ReductionCall;
inline const std::vector<ElementwiseOp>& elementwise_ops() {
  return nf::test::elementwise_calls();
}
inline const std::vector<ReductionOp>& reduction_ops() {
  return nf::test::reduction_calls();
}
inline const ElementwiseOp& elementwise_op(std::string_view name) {
  return nf::test::elementwise_call(name);
}
inline const ReductionOp& reduction_op(std::string_view name) {
  return nf::test::reduction_call(name);
}

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
