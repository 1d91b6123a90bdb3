// Elementwise ops: each row of the op table calls its device function from
// jit/runtime/nf_ops.h, the same code a generated kernel runs.
#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/shape_util.hpp"
#include "cpu/kernels.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_ops.h"

namespace nf::cpu {
namespace {

// Calls f(std::integral_constant<std::size_t, mask>) for the run-time
// `mask` (below 2^K): one instantiation of f per mask.
template <std::size_t K, std::size_t M = 0, class F>
void with_mask(std::size_t mask, F&& f) {
  if constexpr (M + 1 < (std::size_t(1) << K)) {
    if (mask != M) return with_mask<K, M + 1>(mask, f);
  }
  f(std::integral_constant<std::size_t, M>{});
}

template <class R, class... A, class F, std::size_t... I>
void loop(Value& out, const std::vector<Value>& ins, F f, std::index_sequence<I...>) {
  constexpr std::size_t K = sizeof...(A);
  std::array<Strides, K> bs{broadcast_strides(ins[I].shape, ins[I].strides, out.shape)...};
  std::tuple<const A*...> p{ins[I].template data<A>()...};
  // The output is the last operand: a new value, or a view of the array the
  // statement writes (BlockEvaluator::write_into), whose rows lie apart.
  std::array<const Strides*, K + 1> sp{&bs[I]..., &out.strides};
  R* const o = out.data<R>();
  for_each_row<K + 1>(out.shape, sp,
                      [&](std::int64_t, const auto& off, const auto& step, std::int64_t n) {
                        R* const row = o + off[K];
                        // Rows whose operands are each contiguous or constant along the row
                        // (a scalar, a row's mean) vectorise: a loop for each such mix, in
                        // which the compiler knows which operands step (M's bits). Told at
                        // run time, it left the loop scalar: 8 instructions an element for
                        // x * 0.5f in f32 (callgrind, 2026-11-29).
                        if (step[K] == 1 && ((step[I] == 0 || step[I] == 1) && ...)) {
                          const std::size_t mask = ((std::size_t(step[I] == 1) << I) | ...);
                          with_mask<K>(mask, [&](auto m) {
                            constexpr std::size_t M = decltype(m)::value;
                            for (std::int64_t i = 0; i < n; ++i) {
                              row[i] = f(std::get<I>(p)[off[I] + ((M >> I) & 1 ? i : 0)]...);
                            }
                          });
                        } else {
                          for (std::int64_t i = 0; i < n; ++i) {
                            row[i * step[K]] = f(std::get<I>(p)[off[I] + i * step[I]]...);
                          }
                        }
                      });
}

// Runs f with operand types (A0, T, T...): A0 is b8 for where()'s condition.
template <class A0, class T, std::size_t Arity, class F>
void run_typed(const char* name, Value& out, const std::vector<Value>& ins, F f) {
  if constexpr (Arity == 1) {
    if constexpr (std::is_invocable_v<F, T>) {
      using R = std::invoke_result_t<F, T>;
      if (ctype_of<R>() == out.ctype) return loop<R, T>(out, ins, f, std::make_index_sequence<1>{});
    }
  } else if constexpr (Arity == 2) {
    if constexpr (std::is_invocable_v<F, T, T>) {
      using R = std::invoke_result_t<F, T, T>;
      if (ctype_of<R>() == out.ctype) {
        return loop<R, T, T>(out, ins, f, std::make_index_sequence<2>{});
      }
    }
  } else {
    if constexpr (std::is_invocable_v<F, A0, T, T>) {
      using R = std::invoke_result_t<F, A0, T, T>;
      if (ctype_of<R>() == out.ctype) {
        return loop<R, A0, T, T>(out, ins, f, std::make_index_sequence<3>{});
      }
    }
  }
  throw InternalError(std::string("cpu: no ") + name + " for compute type " +
                      std::string(nf::name(ctype_of<T>())));
}

template <std::size_t Arity, class F>
Value run(const char* name, const Shape& shape, DType out_ctype, const std::vector<Value>& ins,
          const Value* into, F f) {
  Value out = into ? *into : make_value(out_ctype, shape);
  visit_ctype(ins.back().ctype, [&](auto tag) {
    using T = decltype(tag);
    if (Arity == 3 && ins[0].ctype != ins.back().ctype) {
      run_typed<nf_b8, T, Arity>(name, out, ins, f);
    } else {
      run_typed<T, T, Arity>(name, out, ins, f);
    }
  });
  return out;
}

}  // namespace

Value elementwise(OpId op, const Shape& shape, DType out_ctype, const std::vector<Value>& ins,
                  const Value* into) {
  switch (op) {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn)    \
  case OpId::name:                                        \
    return run<arity>(#name, shape, out_ctype, ins, into, \
                      [](auto... a) -> decltype(fn(a...)) { return fn(a...); });
#include "graph/ops.def"
    default:
      throw InternalError("cpu::elementwise: not an elementwise op: " + std::string(op_name(op)));
  }
}

}  // namespace nf::cpu
