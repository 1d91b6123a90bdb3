#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace nftest {

using nf::DType;

// ---- dtypes -----------------------------------------------------------------

std::string dname(DType t) {
  switch (t) {
    case nf::bool_:
      return "bool";
    case nf::u8:
      return "u8";
    case nf::i32:
      return "i32";
    case nf::i64:
      return "i64";
    case nf::f16:
      return "f16";
    case nf::bf16:
      return "bf16";
    case nf::f32:
      return "f32";
    case nf::f64:
      return "f64";
  }
  return "dtype#" + std::to_string(static_cast<int>(t));
}

bool is_float(DType t) {
  return t == nf::f16 || t == nf::bf16 || t == nf::f32 || t == nf::f64;
}

namespace {

int int_rank(DType t) {
  return t == nf::u8 ? 0 : t == nf::i32 ? 1 : 2;
}
int float_bits(DType t) {
  return t == nf::f64 ? 64 : t == nf::f32 ? 32 : 16;
}

}  // namespace

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == nf::bool_) return b;
  if (b == nf::bool_) return a;
  const bool fa = is_float(a), fb = is_float(b);
  if (!fa && !fb) return int_rank(a) >= int_rank(b) ? a : b;
  if (fa && fb) {
    if (float_bits(a) == 16 && float_bits(b) == 16) return nf::f32;  // f16 with bf16
    return float_bits(a) >= float_bits(b) ? a : b;
  }
  const DType f = fa ? a : b, i = fa ? b : a;
  // u8 fits every float exactly; i32 and i64 need f64 (numpy: i32 + f16 -> f64).
  return i == nf::u8 ? f : nf::f64;
}

DType promote(const std::vector<DType>& ts) {
  DType p = ts.at(0);
  for (DType t : ts) p = promote(p, t);
  return p;
}

DType float_of(DType t) {
  if (is_float(t)) return t;
  return (t == nf::u8 || t == nf::bool_) ? nf::f16 : nf::f64;
}

namespace {

// Rounds to `bits` significant bits with quanta no smaller than 2^min_q, ties
// to even; |result| above `max_finite` is infinite.
double round_bits(double v, int bits, int min_q, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  int e;
  std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  const int q = std::max(e - bits, min_q);
  const double r = std::ldexp(std::nearbyint(std::ldexp(std::fabs(v), -q)), q);
  if (r > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return std::copysign(r, v);
}

}  // namespace

double round_to(DType t, double v) {
  switch (t) {
    case nf::f16:
      return round_bits(v, 11, -24, 65504.0);
    case nf::bf16:
      return round_bits(v, 8, -133, 3.3895313892515355e38);
    case nf::f32:
      return static_cast<double>(static_cast<float>(v));
    default:
      return v;
  }
}

std::int64_t wrap_to(DType t, std::int64_t v) {
  switch (t) {
    case nf::bool_:
      return v != 0;
    case nf::u8:
      return static_cast<std::int64_t>(static_cast<std::uint8_t>(v));
    case nf::i32:
      return static_cast<std::int64_t>(static_cast<std::int32_t>(v));
    default:
      return v;
  }
}

std::int64_t add_w(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t sub_w(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t mul_w(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// ---- shapes -----------------------------------------------------------------

std::string shape_str(const nf::Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

std::int64_t count(const nf::Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

nf::Shape broadcast(const std::vector<nf::Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  nf::Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (std::size_t k = 0; k < s.size(); ++k) {
      std::int64_t& o = out[rank - s.size() + k];
      const std::int64_t d = s[k];
      if (d == o || d == 1) continue;
      if (o != 1) throw std::invalid_argument("shapes do not broadcast");
      o = d;
    }
  }
  return out;
}

std::vector<std::int64_t> broadcast_map(const nf::Shape& in, const nf::Shape& out) {
  const std::size_t rank = out.size(), lead = rank - in.size();
  // C-order strides of `in`, 0 where it broadcasts, aligned to `out`'s axes.
  std::vector<std::int64_t> stride(rank, 0);
  std::int64_t s = 1;
  for (std::size_t k = in.size(); k-- > 0;) {
    stride[lead + k] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
  const std::int64_t n = count(out);
  std::vector<std::int64_t> map(static_cast<std::size_t>(n));
  std::vector<std::int64_t> idx(rank, 0);
  for (std::int64_t f = 0; f < n; ++f) {
    std::int64_t src = 0;
    for (std::size_t k = 0; k < rank; ++k) src += idx[k] * stride[k];
    map[static_cast<std::size_t>(f)] = src;
    for (std::size_t k = rank; k-- > 0;) {
      if (++idx[k] < out[k]) break;
      idx[k] = 0;
    }
  }
  return map;
}

// ---- random inputs ------------------------------------------------------------

std::string input_str(const Input& in) {
  static const char* names[] = {"", " transposed view", " strided view", " reversed view"};
  return shape_str(in.shape) + names[static_cast<int>(in.view)];
}

namespace {

void int_range(DType t, const Domain& dom, std::int64_t& lo, std::int64_t& hi) {
  std::int64_t tlo = std::numeric_limits<std::int64_t>::min();
  std::int64_t thi = std::numeric_limits<std::int64_t>::max();
  if (t == nf::u8) tlo = 0, thi = 255;
  if (t == nf::i32) tlo = INT32_MIN, thi = INT32_MAX;
  if (dom.full_ints) {
    lo = tlo, hi = thi;
    return;
  }
  lo = std::max(dom.ilo, tlo), hi = std::min(dom.ihi, thi);
  if (lo > hi) lo = hi = std::max(std::int64_t{0}, hi);
}

}  // namespace

nf::Array random_array(std::mt19937& rng, const Domain& dom, DType t, const Input& in) {
  nf::Shape base = in.shape;
  if (in.view == View::transposed) std::reverse(base.begin(), base.end());
  if (in.view == View::strided) base.back() = 2 * base.back() + 1;
  const auto n = static_cast<std::size_t>(count(base));
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  nf::Array a;
  if (t == nf::bool_) {
    std::vector<bool> v(n);
    const double p_true = dom.zero_frac > 0 ? 1 - dom.zero_frac : 0.5;
    for (std::size_t k = 0; k < n; ++k) v[k] = unit(rng) < p_true;
    if (n && std::none_of(v.begin(), v.end(), [](bool b) { return b; })) v[0] = true;
    a = nf::array(v, base);
  } else if (!is_float(t)) {
    std::int64_t lo, hi;
    int_range(t, dom, lo, hi);
    std::vector<std::int64_t> v(n);
    if (dom.signed_magnitude) {
      std::uniform_int_distribution<std::int64_t> mag(std::max<std::int64_t>(lo, 1), hi);
      for (auto& x : v) x = (t != nf::u8 && unit(rng) < 0.5) ? -mag(rng) : mag(rng);
    } else {
      std::uniform_int_distribution<std::int64_t> dist(lo, hi);
      for (auto& x : v) x = dist(rng);
    }
    for (auto& x : v)
      if (unit(rng) < dom.zero_frac) x = 0;
    if (n && std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x == 0; })) {
      v[0] = hi != 0 ? hi : lo;
    }
    a = nf::array(v, base).astype(t);
  } else {
    std::vector<double> v(n);
    std::uniform_real_distribution<double> dist(dom.lo, dom.hi);
    for (auto& x : v) {
      x = dist(rng);
      if (dom.signed_magnitude && unit(rng) < 0.5) x = -x;
      if (unit(rng) < dom.half_frac) x = std::round(2 * x) / 2;
      if (unit(rng) < dom.zero_frac) x = 0;
      if (dom.specials && unit(rng) < 0.12) {
        static const double sp[] = {std::nan(""), INFINITY, -INFINITY, -0.0, 0.0};
        x = sp[static_cast<int>(unit(rng) * 5)];
      }
    }
    if (n && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; })) v[0] = dom.hi;
    a = nf::array(v, base).astype(t);
  }

  nf::Array view = a;
  if (in.view == View::transposed) view = a.T();
  if (in.view == View::strided) {
    std::vector<nf::Index> idx(base.size() - 1, nf::Index(nf::all));
    idx.push_back(nf::slice(1, nf::none, 2));
    view = a.index(idx);
  }
  if (in.view == View::reversed) view = a.index({nf::slice(nf::none, nf::none, -1)});

  // The view's elements, found here from the base's: the op tests read inputs
  // through to_vector, so it must not share a stride bug with the kernels.
  if (in.view != View::plain) {
    const std::vector<double> b = a.to_vector<double>(), got = view.to_vector<double>();
    const std::size_t rank = in.shape.size();
    std::vector<std::int64_t> idx(rank, 0), bidx(rank);
    const auto n_view = static_cast<std::size_t>(count(in.shape));
    if (got.size() != n_view) throw std::logic_error("view of " + input_str(in) + ": wrong size");
    for (std::size_t f = 0; f < n_view; ++f) {
      for (std::size_t k = 0; k < rank; ++k) {
        bidx[k] = in.view == View::transposed ? idx[rank - 1 - k] : idx[k];
      }
      if (in.view == View::strided) bidx[rank - 1] = 2 * idx[rank - 1] + 1;
      if (in.view == View::reversed) bidx[0] = in.shape[0] - 1 - idx[0];
      std::int64_t src = 0;
      for (std::size_t k = 0; k < rank; ++k) src = src * base[k] + bidx[k];
      const double want = b[static_cast<std::size_t>(src)];
      if (!(got[f] == want || (std::isnan(got[f]) && std::isnan(want)))) {
        throw std::logic_error("to_vector of a " + input_str(in) + " reads element " +
                               std::to_string(f) + " as " + num(got[f]) + ", not " + num(want));
      }
      for (std::size_t k = rank; k-- > 0;) {
        if (++idx[k] < in.shape[k]) break;
        idx[k] = 0;
      }
    }
  }
  return view;
}

Values read_values(const nf::Array& a) {
  Values v;
  v.d = a.to_vector<double>();
  if (!is_float(a.dtype())) v.i = a.to_vector<std::int64_t>();
  return v;
}

std::uint32_t seed_of(const std::string& name, std::uint32_t a, std::uint32_t b) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  h = (h ^ a) * 16777619u;
  return (h ^ b) * 16777619u;
}

// ---- comparison -----------------------------------------------------------------

Tol tol_for(DType result) {
  switch (result) {
    case nf::f16:
      return {5e-3, 1e-5};  // ulp 2^-10: about 5 ulp
    case nf::bf16:
      return {1.6e-2, 1e-5};  // ulp 2^-7: about 2 ulp
    case nf::f32:
      return {1e-5, 1e-6};
    case nf::f64:
      return {1e-12, 1e-14};
    default:
      return {0, 0};
  }
}

double compute_eps(DType result) {
  return result == nf::f64 ? 0x1p-53 : 0x1p-24;
}

bool close(double got, double want, Tol tol, double scale) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::max(std::fabs(want), scale);
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace nftest
