// Reductions through the kernels' own definitions: each term accumulates in
// the monoid a generated kernel uses (jit/runtime/nf_reduce.h, its
// accumulator type, identity and combination), a second pass deviates from
// the first's result as the kernel's does, and each reduction finishes with
// the function ops.def names. The backends differ only in the order in which
// their walks take the elements.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "codegen/monoids.hpp"
#include "cpu/kernels.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_cast.h"

namespace nf::cpu {
namespace {

template <class M, class T>
using Acc = typename M::template acc<T>;

// Whether M deviates from a centre (its accumulate takes one).
template <class M, class T>
constexpr bool kCentred = requires(Acc<M, T> a, T x) {
  M::accumulate(a, x, 0LL, x);
};

// Deviations are taken of floating values only (their reductions compute in
// a floating type); other pairs of a term and a compute type never meet.
template <class M, class T>
constexpr bool kMeets = !kCentred<M, T> || nf_is_float<T>::value;

template <class F>
void with_term(TermKind k, DType ctype, F&& f) {
  visit_ctype(ctype, [&](auto tag) { jit::with_monoid(k, [&](auto m) { f(m, tag); }); });
}

template <class A>
A* accs_of(Partials& p) {
  return reinterpret_cast<A*>(p.accs.data());
}
template <class A>
const A* accs_of(const Partials& p) {
  return reinterpret_cast<const A*>(p.accs.data());
}

template <class M, class T>
Acc<M, T> take(Acc<M, T> a, T x, long long r, T centre) {
  if constexpr (kCentred<M, T>) {
    return M::accumulate(a, x, r, centre);
  } else {
    return M::accumulate(a, x, r);
  }
}

// Runs shorter than this are read through a table of every element's
// offset, as one row: setting up and combining eight accumulators for each
// run of 10 halves took a sum over (0, 2) of (2202, 1478, 10) 1.5 times the
// time of the table, and taking them in turn across runs (lane t % 8) kept
// the accumulators in memory, 1.8 times on the GPU machine's Xeon.
constexpr std::int64_t kShortRun = 16;

// A row into its output's accumulator, element j of it at(j): eight
// accumulators take every eighth element, so that the compiler keeps
// numbers in vector registers and no element waits on the one before (an
// arg-reduction's pair in one accumulator waited on each comparison), and
// combine in a fixed order.
template <class M, class T, class At>
Acc<M, T> accumulate_row(Acc<M, T> a, std::int64_t n, At at, std::int64_t first, T centre) {
  constexpr int kLanes = 8;
  Acc<M, T> lane[kLanes];
  for (auto& l : lane) l = M::template identity<T>();
  const std::int64_t body = n - n % kLanes;
  for (std::int64_t j = 0; j < body; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      lane[l] = take<M, T>(lane[l], at(j + l), first + j + l, centre);
    }
  }
  for (std::int64_t j = body; j < n; ++j) {
    lane[j - body] = take<M, T>(lane[j - body], at(j), first + j, centre);
  }
  const M m;
  return m(a, m(m(m(lane[0], lane[1]), m(lane[2], lane[3])),
                m(m(lane[4], lane[5]), m(lane[6], lane[7]))));
}

// argmax's and argmin's terms, which a row of numbers can skip through.
template <class M>
struct ArgTerm : std::false_type {};
template <bool Max>
struct ArgTerm<nf_arg_term<Max>> : std::true_type {
  static constexpr bool max = Max;
};

// argmax (Max) or argmin of a row of numbers one after another, a block at a
// time: the block's extreme, found in vector registers, is all it costs
// unless it beats the best so far (a tie keeps the earlier index), and then
// the best is its first element equal to it. A block with a NaN or an
// infinity in it (x * 0 is NaN for those) is taken element by element. The
// result is the element-by-element one: the rule picks the same element in
// any order.
template <bool Max, class T>
nf_arg<T> accumulate_arg_row(nf_arg<T> a, std::int64_t n, const T* r, std::int64_t first) {
  using Term = nf_arg_term<Max>;
  // Two 16-byte vectors of T, written as such: the compiler leaves a loop
  // of lanes that select scalar.
  typedef T Vec __attribute__((vector_size(16)));
  constexpr int kPer = int(16 / sizeof(T));
  constexpr std::int64_t kBlock = 64, kStep = 2 * kPer;
  // The block of `len` elements from j (whole steps); false where the best
  // is a NaN, which nothing after it beats. Whole blocks pass their length
  // as a constant, so that the compiler unrolls them; both inlined, as a
  // call kept the best in memory.
  const auto block = [&](std::int64_t j, auto len) __attribute__((always_inline)) {
    if (a.index >= 0 && a.value != a.value) return false;
    Vec ext[2], odd[2] = {};
    std::memcpy(&ext, r + j, sizeof ext);
    for (std::int64_t k = 0; k < len; k += kStep) {
      for (int v = 0; v < 2; ++v) {
        Vec x;
        std::memcpy(&x, r + j + k + v * kPer, sizeof x);
        ext[v] = (Max ? x > ext[v] : x < ext[v]) ? x : ext[v];
        odd[v] += x * T(0);
      }
    }
    T e = ext[0][0], o = T(0);
    for (int v = 0; v < 2; ++v) {
      for (int l = 0; l < kPer; ++l) {
        e = (Max ? ext[v][l] > e : ext[v][l] < e) ? ext[v][l] : e;
        o += odd[v][l];
      }
    }
    if (o != T(0)) {
      for (std::int64_t i = j; i < j + len; ++i) a = Term::accumulate(a, r[i], first + i);
    } else if (a.index < 0 || (Max ? e > a.value : e < a.value)) {
      std::int64_t i = j;
      while (r[i] != e) ++i;
      a = {e, first + i};
    }
    return true;
  };
  std::int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    if (!block(j, std::integral_constant<std::int64_t, kBlock>())) return a;
  }
  // The row's last whole steps as one block more: one element at a time,
  // the 61 after the 15 blocks of a row of 1021 floats took a fifth of its
  // time. Not 64-bit integers, which x86-64's baseline (SSE2) compares a
  // lane at a time: as a block, rows of 33 took 1.3 times as long
  // (bench/RESULTS.md).
  constexpr bool kLastBlock = !(std::is_integral_v<T> && sizeof(T) == 8);
  if (const std::int64_t last = (n - j) / kStep * kStep; kLastBlock && last > 0) {
    if (!block(j, last)) return a;
    j += last;
  }
  for (; j < n; ++j) a = Term::accumulate(a, r[j], first + j);
  return a;
}

// Each reduced element, `at` from the outputs' first, added to `outs`
// outputs `step` apart whose accumulators lie one after another, in the
// order of `at`: element k's index is first + k.
template <class M, class T>
void accumulate_columns(Acc<M, T>* a, std::int64_t outs, const T* p, std::int64_t step,
                        const std::vector<std::int64_t>& at, std::int64_t first, const T* centre) {
  for (std::size_t k = 0; k < at.size(); ++k) {
    const T* r = p + at[k];
    const long long index = first + std::int64_t(k);
    if (step == 1 && !centre) {
      for (std::int64_t i = 0; i < outs; ++i) a[i] = take<M, T>(a[i], r[i], index, T(0));
    } else {
      for (std::int64_t i = 0; i < outs; ++i) {
        a[i] = take<M, T>(a[i], r[i * step], index, centre ? centre[i] : T(0));
      }
    }
  }
}

[[noreturn]] void no_such_pair(TermKind k, DType ctype) {
  throw InternalError("cpu::reduce: term " + std::string(term_name(k)) + " over " +
                      std::string(name(ctype)));
}

// Reduction op's results, from accumulators of the monoids Ms, by `fn`.
template <class... Ms, class F>
Value finish_with(F fn, const std::vector<Partials>& terms, std::int64_t n, std::int64_t ddof,
                  const Shape& out_shape, DType out_ctype) {
  if (terms.size() != sizeof...(Ms)) throw InternalError("cpu::finish: a term is missing");
  Value out = make_value(out_ctype, out_shape);
  visit_ctype(terms[0].ctype, [&](auto tag) {
    using T = decltype(tag);
    // Pairs of a reduction and a compute type that never meet (a norm of
    // integers: they are taken as f64) are not made.
    if constexpr ((kMeets<Ms, T> && ...) &&
                  std::is_invocable_v<F, const Acc<Ms, T>&..., long long, int>) {
      visit_ctype(out_ctype, [&](auto out_tag) {
        using R = decltype(out_tag);
        R* o = out.data<R>();
        const auto accs = [&]<std::size_t... I>(std::index_sequence<I...>) {
          return std::tuple<const Acc<Ms, T>*...>{accs_of<Acc<Ms, T>>(terms[I])...};
        }
        (std::index_sequence_for<Ms...>());
        for (std::int64_t i = 0; i < terms[0].outputs; ++i) {
          o[i] = std::apply(
              [&](const auto*... a) { return nf_convert<R>(fn(a[i]..., (long long)n, int(ddof))); },
              accs);
        }
      });
    } else {
      no_such_pair(terms[0].term, terms[0].ctype);
    }
  });
  return out;
}

}  // namespace

Partials start_term(TermKind term, DType ctype, std::int64_t outputs) {
  Partials p{term, ctype, outputs, {}};
  with_term(term, ctype, [&](auto m, auto tag) {
    using M = decltype(m);
    using T = decltype(tag);
    using A = Acc<M, T>;
    p.accs.resize(std::size_t(outputs) * sizeof(A));
    A* a = accs_of<A>(p);
    for (std::int64_t i = 0; i < outputs; ++i) a[i] = M::template identity<T>();
  });
  return p;
}

void accumulate(Partials& p, const Value& in, const std::vector<int>& axes,
                std::int64_t first_index, const Value* centres) {
  Shape out_shape = in.shape, reduced_shape(in.shape.size(), 1);
  for (int a : axes) {
    out_shape[a] = 1;
    reduced_shape[a] = in.shape[a];
  }
  const std::int64_t n = numel(reduced_shape);
  if (n == 0) return;  // every accumulator stays its identity
  const int nd = int(in.shape.size());
  // Where the innermost axis is kept (columns), each reduced element is
  // added to a row of outputs at once: they lie one after another in memory
  // and in the accumulators, so that the compiler adds them in vector
  // registers. Otherwise an output's reduced elements lie in runs, `run` of
  // them `step` apart: the innermost reduced axis longer than 1, and those
  // outside it that continue it in memory (all of them, where the reduced
  // elements lie one after another); a run of floats is summed in vector
  // registers, eight accumulators wide.
  const bool columns = nd > 0 && reduced_shape[nd - 1] == 1 && in.shape[nd - 1] > 1;
  std::int64_t run = 1, step = 1;
  Shape runs_shape = reduced_shape;
  for (int a = nd - 1; a >= 0 && !columns; --a) {
    if (reduced_shape[a] == 1) continue;
    if (run == 1) {
      step = in.strides[a];
    } else if (in.strides[a] != run * step) {
      break;
    }
    run *= reduced_shape[a];
    runs_shape[a] = 1;
  }
  if (run < kShortRun) {
    run = 1;
    runs_shape = reduced_shape;
  }
  // Where each run (or each reduced element, for columns and short runs)
  // starts from its output's first element, in C order, so that
  // arg-reductions over several axes index the flattened axes: run k's
  // element j is k * run + j. Kept per thread: a block's offsets take more
  // than malloc hands out from its heap, and fresh pages for every block cost
  // a full sum 1.7 times its time in page faults.
  thread_local std::vector<std::int64_t> starts;
  starts.clear();
  starts.reserve(std::size_t(n / run));
  for_each_row<1>(runs_shape, {&in.strides},
                  [&](std::int64_t, const auto& off, const auto& inner, std::int64_t m) {
                    for (std::int64_t i = 0; i < m; ++i) starts.push_back(off[0] + i * inner[0]);
                  });
  with_term(p.term, in.ctype, [&](auto m, auto tag) {
    using M = decltype(m);
    using T = decltype(tag);
    if constexpr (kMeets<M, T>) {
      auto* accs = accs_of<Acc<M, T>>(p);
      const T* data = in.data<T>();
      const T* centre = centres ? centres->data<T>() : nullptr;
      for_each_row<1>(
          out_shape, {&in.strides},
          [&](std::int64_t first, const auto& off, const auto& out_step, std::int64_t outs) {
            if (columns) {
              accumulate_columns<M, T>(accs + first, outs, data + off[0], out_step[0], starts,
                                       first_index, centre ? centre + first : nullptr);
              return;
            }
            for (std::int64_t i = 0; i < outs; ++i) {
              const T* q = data + off[0] + i * out_step[0];
              const std::int64_t o = first + i;
              const T c = centre ? centre[o] : T(0);
              if (run == 1) {
                accs[o] = accumulate_row<M, T>(
                    accs[o], n, [q, at = starts.data()](std::int64_t j) { return q[at[j]]; },
                    first_index, c);
                continue;
              }
              for (std::size_t k = 0; k < starts.size(); ++k) {
                const T* r = q + starts[k];
                const std::int64_t index = first_index + std::int64_t(k) * run;
                if constexpr (ArgTerm<M>::value && std::is_arithmetic_v<T> &&
                              !std::is_same_v<T, bool>) {
                  if (step == 1) {
                    accs[o] = accumulate_arg_row<ArgTerm<M>::max, T>(accs[o], run, r, index);
                    continue;
                  }
                }
                // Unit steps apart, so that the loads are plain vector loads.
                accs[o] = step == 1
                              ? accumulate_row<M, T>(
                                    accs[o], run, [r](std::int64_t j) { return r[j]; }, index, c)
                              : accumulate_row<M, T>(
                                    accs[o], run, [r, step](std::int64_t j) { return r[j * step]; },
                                    index, c);
              }
            }
          });
    } else {
      no_such_pair(p.term, in.ctype);
    }
  });
}

void combine(Partials& into, const Partials& later) {
  with_term(into.term, into.ctype, [&](auto m, auto tag) {
    using A = Acc<decltype(m), decltype(tag)>;
    A* a = accs_of<A>(into);
    const A* b = accs_of<A>(later);
    for (std::int64_t i = 0; i < into.outputs; ++i) a[i] = m(a[i], b[i]);
  });
}

Value centres(const Partials& first, TermKind next, std::int64_t n, const Shape& out_shape) {
  Value out = make_value(first.ctype, out_shape);
  const Centre centre = term_centre(next);
  with_term(first.term, first.ctype, [&](auto m, auto tag) {
    using T = decltype(tag);
    using A = Acc<decltype(m), T>;
    if constexpr (std::is_same_v<A, T>) {
      const A* a = accs_of<A>(first);
      T* o = out.data<T>();
      for (std::int64_t i = 0; i < first.outputs; ++i) {
        // As a kernel's mean: the sum over n in the sum's type.
        o[i] = centre == Centre::mean ? T(a[i] / T(n)) : a[i];
      }
    } else {
      no_such_pair(first.term, first.ctype);
    }
  });
  return out;
}

Value finish(OpId op, const std::vector<Partials>& terms, std::int64_t n, std::int64_t ddof,
             const Shape& out_shape, DType out_ctype) {
  switch (op) {
#define NF_MONOID(term) nf_##term##_term
#define NF_REDUCTION(name, rule, accepts, form, passes, finish)                                  \
  case OpId::name:                                                                               \
    return finish_with<NF_EACH_PASS(NF_MONOID, passes)>(                                         \
        [](const auto&... a) -> decltype(finish(a...)) { return finish(a...); }, terms, n, ddof, \
        out_shape, out_ctype);
#include "graph/ops.def"
#undef NF_MONOID
    default:
      throw InternalError("cpu::finish: not a reduction: " + std::string(op_name(op)));
  }
}

Value reduce(OpId op, const Value& in, const std::vector<int>& axes, std::int64_t ddof,
             DType out_ctype) {
  Shape out_shape = in.shape;
  std::int64_t n = 1;
  for (int a : axes) {
    n *= in.shape[a];
    out_shape[a] = 1;
  }
  std::vector<Partials> terms;
  std::optional<Value> centre;
  for (TermKind k : reduction_passes(op)) {
    if (!terms.empty()) centre = centres(terms.back(), k, n, out_shape);
    terms.push_back(start_term(k, in.ctype, numel(out_shape)));
    accumulate(terms.back(), in, axes, 0, centre ? &*centre : nullptr);
  }
  return finish(op, terms, n, ddof, out_shape, out_ctype);
}

}  // namespace nf::cpu
