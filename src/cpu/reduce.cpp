// Reductions. Floating values accumulate in double and var/std use two
// passes (mean, then squared deviations), so rows with a large mean and a
// small spread keep their precision.
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

// One output element: the inputs at p[base + offs[j]].
template <class T>
struct Row {
  const T* p;
  std::int64_t base;
  const std::vector<std::int64_t>& offs;
  std::int64_t size() const { return std::int64_t(offs.size()); }
  T operator[](std::int64_t j) const { return p[base + offs[j]]; }
};

constexpr bool is_nan(double x) {
  return x != x;
}

template <class T>
double mean_of(const Row<T>& r) {
  double s = 0;
  for (std::int64_t j = 0; j < r.size(); ++j) s += double(r[j]);
  return s / double(r.size());
}

template <class T>
double var_of(const Row<T>& r, std::int64_t ddof) {
  const double m = mean_of(r);
  double s = 0;
  for (std::int64_t j = 0; j < r.size(); ++j) {
    const double d = double(r[j]) - m;
    s += d * d;
  }
  return s / double(std::max<std::int64_t>(r.size() - ddof, 0));
}

template <class T>
double logsumexp_of(const Row<T>& r) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < r.size(); ++j) {
    const double x = double(r[j]);
    if (is_nan(x)) return x;
    m = std::max(m, x);
  }
  if (std::isinf(m)) return m;  // all -inf (or empty), or some +inf
  double s = 0;
  for (std::int64_t j = 0; j < r.size(); ++j) s += std::exp(double(r[j]) - m);
  return m + std::log(s);
}

// First index of the extreme value, by the rule the GPU kernels combine with.
template <class T, bool Max>
std::int64_t arg_of(const Row<T>& r) {
  if (r.size() == 0) return 0;
  nf_arg<T> best{r[0], 0};
  for (std::int64_t j = 1; j < r.size(); ++j) {
    const nf_arg<T> x{r[j], j};
    if (nf_arg_beats<T, Max>(x, best)) best = x;
  }
  return best.index;
}

template <class R, class T>
R reduce_row(OpId op, const Row<T>& r, std::int64_t ddof) {
  constexpr bool fl = nf_is_float<T>::value;
  switch (op) {
    case OpId::sum:
    case OpId::prod: {
      const bool sum = op == OpId::sum;
      if constexpr (fl) {
        double acc = sum ? 0.0 : 1.0;
        for (std::int64_t j = 0; j < r.size(); ++j) acc = sum ? acc + r[j] : acc * r[j];
        return nf_convert<R>(acc);
      } else {
        T acc = sum ? T(0) : T(1);
        for (std::int64_t j = 0; j < r.size(); ++j) {
          acc = sum ? nf_add(acc, r[j]) : nf_multiply(acc, r[j]);
        }
        return nf_convert<R>(acc);
      }
    }
    case OpId::mean:
      return nf_convert<R>(mean_of(r));
    case OpId::var:
      return nf_convert<R>(var_of(r, ddof));
    case OpId::std:
      return nf_convert<R>(std::sqrt(var_of(r, ddof)));
    case OpId::min:
    case OpId::max: {
      T acc = r[0];
      for (std::int64_t j = 1; j < r.size(); ++j) {
        acc = op == OpId::min ? nf_minimum(acc, r[j]) : nf_maximum(acc, r[j]);
      }
      return nf_convert<R>(acc);
    }
    case OpId::argmin:
      return nf_convert<R>(arg_of<T, false>(r));
    case OpId::argmax:
      return nf_convert<R>(arg_of<T, true>(r));
    case OpId::any:
    case OpId::all: {
      const bool any = op == OpId::any;
      for (std::int64_t j = 0; j < r.size(); ++j) {
        if ((r[j] != T(0)) == any) return nf_convert<R>(any);
      }
      return nf_convert<R>(!any);
    }
    case OpId::logsumexp:
      return nf_convert<R>(logsumexp_of(r));
    default:
      throw InternalError("cpu::reduce: not a reduction: " + std::string(op_name(op)));
  }
}

}  // namespace

Value reduce(OpId op, const Value& in, const std::vector<int>& axes, std::int64_t ddof,
             DType out_ctype) {
  Shape out_shape = in.shape, reduced_shape(in.shape.size(), 1);
  for (int a : axes) {
    out_shape[a] = 1;
    reduced_shape[a] = in.shape[a];
  }
  // Offsets of the reduced elements relative to their output's first, in C
  // order (so arg-reductions over several axes index the flattened axes).
  std::vector<std::int64_t> offs;
  for_each_row<1>(reduced_shape, {&in.strides},
                  [&](std::int64_t, const auto& off, const auto& step, std::int64_t n) {
                    for (std::int64_t i = 0; i < n; ++i) offs.push_back(off[0] + i * step[0]);
                  });
  Value out = make_value(out_ctype, out_shape);
  visit_ctype(in.ctype, [&](auto in_tag) {
    using T = decltype(in_tag);
    visit_ctype(out_ctype, [&](auto out_tag) {
      using R = decltype(out_tag);
      R* o = out.data<R>();
      const T* p = in.data<T>();
      for_each_row<1>(
          out_shape, {&in.strides},
          [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) {
              o[first + i] = reduce_row<R>(op, Row<T>{p, off[0] + i * step[0], offs}, ddof);
            }
          });
    });
  });
  return out;
}

}  // namespace nf::cpu
