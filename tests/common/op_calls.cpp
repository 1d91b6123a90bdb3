#include "op_calls.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace nf::test {
namespace {

template <int N, class F>
Expr apply(F f, const std::vector<Expr>& x) {
  if constexpr (N == 1)
    return f(x.at(0));
  else if constexpr (N == 2)
    return f(x.at(0), x.at(1));
  else
    return f(x.at(0), x.at(1), x.at(2));
}

// A reduction's public function takes axes and ddof (var, std), axes (sum),
// or one axis or none (argmax).
template <class F>
Expr reduce(F f, const Expr& x, const Axes& a, int d) {
  if constexpr (std::is_invocable_v<F, const Expr&, const Axes&, int>) {
    return f(x, a, d);
  } else if constexpr (std::is_invocable_v<F, const Expr&, const Axes&>) {
    return f(x, a);
  } else {
    return a.is_all() ? f(x) : f(x, a.list().at(0));
  }
}

template <class F>
constexpr bool single_axis = !std::is_invocable_v<F, const Expr&, const Axes&>;
template <class F>
constexpr bool takes_ddof = std::is_invocable_v<F, const Expr&, const Axes&, int>;

#define NF_TEST_CALL(name) \
  [](const auto&... a) -> decltype(nf::name(a...)) { return nf::name(a...); }

}  // namespace

const std::vector<ElementwiseCall>& elementwise_calls() {
  static const std::vector<ElementwiseCall> calls = {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) \
  {#name, arity, [](const std::vector<Expr>& x) { return apply<arity>(NF_TEST_CALL(name), x); }},
#include "graph/ops.def"
  };
  return calls;
}

const std::vector<ReductionCall>& reduction_calls() {
  static const std::vector<ReductionCall> calls = {
#define NF_REDUCTION(name, ...)                                                                    \
  {#name, [](const Expr& x, const Axes& a, int d) { return reduce(NF_TEST_CALL(name), x, a, d); }, \
   single_axis<decltype(NF_TEST_CALL(name))>, takes_ddof<decltype(NF_TEST_CALL(name))>},
#include "graph/ops.def"
  };
  return calls;
}

const ElementwiseCall& elementwise_call(std::string_view name) {
  for (const ElementwiseCall& op : elementwise_calls())
    if (op.name == name) return op;
  throw std::logic_error("no elementwise op " + std::string(name) + " in the op table");
}

const ReductionCall& reduction_call(std::string_view name) {
  for (const ReductionCall& op : reduction_calls())
    if (op.name == name) return op;
  throw std::logic_error("no reduction " + std::string(name) + " in the op table");
}

}  // namespace nf::test
