// Reductions, as states per output that take the reduced elements part by
// part: a block sees part of a long reduced extent, and the parts of several
// threads combine in a fixed order, so results do not depend on the thread
// count. Floating values accumulate in double. var/std take each part in two
// passes (its mean, then its squared deviations) and combine parts by Chan's
// formula, so rows with a large mean and a small spread keep their precision;
// logsumexp takes each part's maximum first likewise. A single part gives
// exactly the two-pass result.
#include <cmath>
#include <limits>
#include <string>

#include "cpu/kernels.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_cast.h"
#include "runtime/nf_ops.h"
#include "runtime/nf_reduce.h"

namespace nf::cpu {
namespace {

// The reduced elements of one output: p[base + offs[j]], or p[base + j]
// where the reduced elements are contiguous (offs == nullptr).
template <class T>
struct Row {
  const T* p;
  std::int64_t base;
  const std::vector<std::int64_t>* offs;
  std::int64_t n;
  std::int64_t size() const { return n; }
  T operator[](std::int64_t j) const { return offs ? p[base + (*offs)[j]] : p[base + j]; }
};

constexpr bool is_nan(double x) {
  return x != x;
}

// var's (count, mean, M2), or logsumexp's (count, max, sum of exp(x - max)),
// of a part, merged into the state. `a` and `b` hold the two figures.
template <class T>
void merge_var(Partial<T>& s, std::int64_t n, double mean, double m2) {
  if (n == 0) return;
  if (s.n == 0) {
    s.n = n;
    s.a = mean;
    s.b = m2;
    return;
  }
  const double na = double(s.n), nb = double(n), nt = na + nb, d = mean - s.a;
  s.a += d * nb / nt;
  s.b += m2 + d * d * na * nb / nt;
  s.n += n;
}

template <class T>
void merge_lse(Partial<T>& s, std::int64_t n, double m, double sum, bool nan) {
  s.flag = s.flag || nan;
  if (n == 0 || s.flag) return;
  if (s.n == 0) {
    s.n = n;
    s.a = m;
    s.b = sum;
    return;
  }
  const double top = std::max(s.a, m);
  if (!std::isinf(top)) s.b = s.b * std::exp(s.a - top) + sum * std::exp(m - top);
  s.a = top;
  s.n += n;
}

template <class T, bool Max>
void take_arg(Partial<T>& s, const nf_arg<T>& x) {
  if (nf_arg_beats<T, Max>(x, nf_arg<T>{s.v, s.index})) {
    s.v = x.value;
    s.index = x.index;
  }
}

// Sums in double over eight lanes, which the compiler keeps in vector
// registers: a sequential sum waits on each add.
template <class R, class F>
double lane_sum(const R& r, F f) {
  double lane[8] = {};
  const std::int64_t n = r.size(), body = n - n % 8;
  for (std::int64_t j = 0; j < body; j += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += f(double(r[j + l]));
  }
  for (std::int64_t j = body; j < n; ++j) lane[j - body] += f(double(r[j]));
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

template <class T, class R>
void accumulate_row(OpId op, Partial<T>& s, const R& r, std::int64_t first) {
  constexpr bool fl = nf_is_float<T>::value;
  const std::int64_t n = r.size();
  switch (op) {
    case OpId::sum:
      if constexpr (fl) {
        s.a += lane_sum(r, [](double x) { return x; });
      } else {
        for (std::int64_t j = 0; j < n; ++j) s.v = nf_add(s.v, r[j]);
      }
      return;
    case OpId::prod:
      if constexpr (fl) {
        for (std::int64_t j = 0; j < n; ++j) s.a *= double(r[j]);
      } else {
        for (std::int64_t j = 0; j < n; ++j) s.v = nf_multiply(s.v, r[j]);
      }
      return;
    case OpId::mean:
      s.a += lane_sum(r, [](double x) { return x; });
      s.n += n;
      return;
    case OpId::var:
    case OpId::std: {
      if (n == 0) return;
      const double mean = lane_sum(r, [](double x) { return x; }) / double(n);
      const double m2 = lane_sum(r, [mean](double x) { return (x - mean) * (x - mean); });
      return merge_var(s, n, mean, m2);
    }
    case OpId::min:
    case OpId::max:
      for (std::int64_t j = 0; j < n; ++j) {
        if (s.n++ == 0) {
          s.v = r[j];
        } else {
          s.v = op == OpId::min ? nf_minimum(s.v, r[j]) : nf_maximum(s.v, r[j]);
        }
      }
      return;
    case OpId::argmin:
      for (std::int64_t j = 0; j < n; ++j) take_arg<T, false>(s, {r[j], first + j});
      return;
    case OpId::argmax:
      for (std::int64_t j = 0; j < n; ++j) take_arg<T, true>(s, {r[j], first + j});
      return;
    case OpId::any:
    case OpId::all: {
      // flag: an element decided the answer (a true for any, a false for all).
      const bool any = op == OpId::any;
      for (std::int64_t j = 0; j < n && !s.flag; ++j) s.flag = (r[j] != T(0)) == any;
      return;
    }
    case OpId::logsumexp: {
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < n; ++j) {
        const double x = double(r[j]);
        if (is_nan(x)) return merge_lse(s, n, x, 0.0, true);
        m = std::max(m, x);
      }
      double sum = 0;
      if (!std::isinf(m)) {
        for (std::int64_t j = 0; j < n; ++j) sum += std::exp(double(r[j]) - m);
      }
      return merge_lse(s, n, m, sum, false);
    }
    default:
      throw InternalError("cpu::reduce: not a reduction: " + std::string(op_name(op)));
  }
}

template <class T>
void combine_one(OpId op, Partial<T>& s, const Partial<T>& t) {
  constexpr bool fl = nf_is_float<T>::value;
  switch (op) {
    case OpId::sum:
      if constexpr (fl) {
        s.a += t.a;
      } else {
        s.v = nf_add(s.v, t.v);
      }
      return;
    case OpId::prod:
      if constexpr (fl) {
        s.a *= t.a;
      } else {
        s.v = nf_multiply(s.v, t.v);
      }
      return;
    case OpId::mean:
      s.a += t.a;
      s.n += t.n;
      return;
    case OpId::var:
    case OpId::std:
      return merge_var(s, t.n, t.a, t.b);
    case OpId::min:
    case OpId::max:
      if (t.n == 0) return;
      s.v = s.n == 0 ? t.v : op == OpId::min ? nf_minimum(s.v, t.v) : nf_maximum(s.v, t.v);
      s.n += t.n;
      return;
    case OpId::argmin:
      return take_arg<T, false>(s, {t.v, t.index});
    case OpId::argmax:
      return take_arg<T, true>(s, {t.v, t.index});
    case OpId::any:
    case OpId::all:
      s.flag = s.flag || t.flag;
      return;
    case OpId::logsumexp:
      return merge_lse(s, t.n, t.a, t.b, t.flag);
    default:
      throw InternalError("cpu::reduce: not a reduction: " + std::string(op_name(op)));
  }
}

template <class R, class T>
R finish_one(OpId op, const Partial<T>& s, std::int64_t ddof) {
  constexpr bool fl = nf_is_float<T>::value;
  switch (op) {
    case OpId::sum:
    case OpId::prod:
      if constexpr (fl) {
        return nf_convert<R>(s.a);
      } else {
        return nf_convert<R>(s.v);
      }
    case OpId::mean:
      return nf_convert<R>(s.a / double(s.n));
    case OpId::var:
    case OpId::std: {
      const double v = (s.n == 0 ? 0.0 : s.b) / double(std::max<std::int64_t>(s.n - ddof, 0));
      return nf_convert<R>(op == OpId::std ? std::sqrt(v) : v);
    }
    case OpId::min:
    case OpId::max:
      return nf_convert<R>(s.v);
    case OpId::argmin:
    case OpId::argmax:
      return nf_convert<R>(std::max<std::int64_t>(s.index, 0));
    case OpId::any:
      return nf_convert<R>(s.flag);
    case OpId::all:
      return nf_convert<R>(!s.flag);
    case OpId::logsumexp:
      if (s.flag) return nf_convert<R>(std::numeric_limits<double>::quiet_NaN());
      if (s.n == 0 || std::isinf(s.a)) {
        return nf_convert<R>(s.n == 0 ? -std::numeric_limits<double>::infinity() : s.a);
      }
      return nf_convert<R>(s.a + std::log(s.b));
    default:
      throw InternalError("cpu::reduce: not a reduction: " + std::string(op_name(op)));
  }
}

template <class T>
std::vector<Partial<T>>& states_of(Partials& p) {
  return std::get<std::vector<Partial<T>>>(p.states);
}
template <class T>
const std::vector<Partial<T>>& states_of(const Partials& p) {
  return std::get<std::vector<Partial<T>>>(p.states);
}

}  // namespace

Partials start_reduce(OpId op, DType in_ctype, std::int64_t outputs, std::int64_t ddof) {
  Partials p{op, in_ctype, ddof, {}};
  visit_ctype(in_ctype, [&](auto tag) {
    using T = decltype(tag);
    Partial<T> init;
    if (op == OpId::prod) {
      init.a = 1.0;
      init.v = T(1);
    }
    p.states = std::vector<Partial<T>>(std::size_t(outputs), init);
  });
  return p;
}

void accumulate(Partials& p, const Value& in, const std::vector<int>& axes,
                std::int64_t first_index) {
  Shape out_shape = in.shape, reduced_shape(in.shape.size(), 1);
  for (int a : axes) {
    out_shape[a] = 1;
    reduced_shape[a] = in.shape[a];
  }
  const std::int64_t n = numel(reduced_shape);
  // Offsets of the reduced elements from their output's first, in C order
  // (so arg-reductions over several axes index the flattened axes); none
  // where they are the contiguous elements of the innermost axis.
  const int nd = int(in.shape.size());
  const bool contiguous = n <= 1 || (reduced_shape[nd - 1] == n && in.strides[nd - 1] == 1);
  std::vector<std::int64_t> offs;
  if (!contiguous) {
    offs.reserve(std::size_t(n));
    for_each_row<1>(reduced_shape, {&in.strides},
                    [&](std::int64_t, const auto& off, const auto& step, std::int64_t m) {
                      for (std::int64_t i = 0; i < m; ++i) offs.push_back(off[0] + i * step[0]);
                    });
  }
  visit_ctype(in.ctype, [&](auto tag) {
    using T = decltype(tag);
    auto& states = states_of<T>(p);
    const T* data = in.data<T>();
    for_each_row<1>(out_shape, {&in.strides},
                    [&](std::int64_t first, const auto& off, const auto& step, std::int64_t m) {
                      for (std::int64_t i = 0; i < m; ++i) {
                        const Row<T> r{data, off[0] + i * step[0], contiguous ? nullptr : &offs, n};
                        accumulate_row(p.op, states[first + i], r, first_index);
                      }
                    });
  });
}

void combine(Partials& into, const Partials& later) {
  visit_ctype(into.ctype, [&](auto tag) {
    using T = decltype(tag);
    auto& s = states_of<T>(into);
    const auto& t = states_of<T>(later);
    for (std::size_t i = 0; i < s.size(); ++i) combine_one(into.op, s[i], t[i]);
  });
}

Value finish(const Partials& p, const Shape& out_shape, DType out_ctype) {
  Value out = make_value(out_ctype, out_shape);
  visit_ctype(p.ctype, [&](auto in_tag) {
    using T = decltype(in_tag);
    const auto& s = states_of<T>(p);
    visit_ctype(out_ctype, [&](auto out_tag) {
      using R = decltype(out_tag);
      R* o = out.data<R>();
      for (std::size_t i = 0; i < s.size(); ++i) o[i] = finish_one<R>(p.op, s[i], p.ddof);
    });
  });
  return out;
}

Value reduce(OpId op, const Value& in, const std::vector<int>& axes, std::int64_t ddof,
             DType out_ctype) {
  Shape out_shape = in.shape;
  for (int a : axes) out_shape[a] = 1;
  Partials p = start_reduce(op, in.ctype, numel(out_shape), ddof);
  accumulate(p, in, axes, 0);
  return finish(p, out_shape, out_ctype);
}

}  // namespace nf::cpu
