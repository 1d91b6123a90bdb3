// Reductions on the GPU against the CPU backend computing in f64, on fresh
// random inputs made on the CPU: every reduction of the op table
// (src/graph/ops.def) x dtype x axes on small and medium shapes and views; the
// common ones in f32 on large shapes and views; fused statements (layer
// normalisation, softmax, logsumexp, centring, column normalisation);
// in-place updates; full reductions that give the same bits on every run;
// first indices of tied extremes; NaN; empty arrays and axes.
//
// Tolerances follow from how a result is computed. Its final rounding may
// differ by one ulp of its dtype between the backends (they round values near
// a tie apart); a reduction over n elements, accumulated in any order, adds
// 4 sqrt(n) units of the compute type (f32 for f16, bf16 and f32), relative to
// the larger of the result and what its rounding error grows with (for a sum,
// sum|x| / sqrt(n): enough for sequential accumulation of data with or
// without a mean). Integer, bool, index, min and max results are exact.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace {

const nf::Device kCpu = nf::Device::cpu();
const nf::Device kGpu{nf::Device::Kind::cuda, 0};

// Statements inside run on the CPU backend; with f64, f32, f16 and bf16 work
// is computed in double there (the reference). Stored dtypes do not change.
class OnCpu {
 public:
  explicit OnCpu(nf::DType compute = nf::f32) {
    nf::set_default_device(kCpu);
    nf::set_cpu_compute_dtype(compute);
  }
  ~OnCpu() {
    nf::set_cpu_compute_dtype(nf::f32);
    nf::set_default_device(kGpu);
  }
  OnCpu(const OnCpu&) = delete;
  OnCpu& operator=(const OnCpu&) = delete;
};

// ---- inputs -------------------------------------------------------------------------

// What an input's values are made to exercise.
enum class Kind {
  normal,    // floats 0.5 + 2 randn; integers in [-100, 100] (u8 [0, 255]); bool half true
  wide,      // floats 100 randn; i32 over its whole range, i64 over +-2^40
  near_one,  // products stay finite: floats 1 +- w, integers 1 with a few 2s; a few negative
  ties,      // four values, so extremes repeat: {-1, 0, 1, 2} ({0, ..., 3} for u8)
  sparse,    // about half of the groups of `group` elements are all zero
  dense,     // about half of the groups of `group` elements hold a zero
  positive,  // floats in [0.1, 1.1], integers in [1, 100]
};

nf::Expr uniform(const nf::Shape& s) {
  return nf::rand(s, nf::f64);
}

// Uniform integers in [lo, hi], as f64 (rand is on (0, 1]: its top value
// would give hi + 1).
nf::Expr uniform_int(const nf::Shape& s, double lo, double hi) {
  return nf::minimum(nf::floor(lo + uniform(s) * (hi - lo + 1)), hi);
}

// 1 with probability p, else 0, as f64.
nf::Expr chance(const nf::Shape& s, double p) {
  return nf::astype(uniform(s) < p, nf::f64);
}

// +-1 with equal odds.
nf::Expr signs(const nf::Shape& s) {
  return 1.0 - 2.0 * chance(s, 0.5);
}

nf::Expr values(Kind kind, nf::DType t, const nf::Shape& s, double group) {
  if (t == nf::bool_) {
    switch (kind) {
      case Kind::near_one:
        return uniform(s) >= 0.5 / group;
      case Kind::sparse:
        return uniform(s) < 0.7 / group;
      case Kind::dense:
        return uniform(s) >= 0.7 / group;
      default:
        return uniform(s) < 0.5;
    }
  }
  const bool u8 = t == nf::u8;
  if (nf::is_floating(t)) {
    switch (kind) {
      case Kind::normal:
        return 0.5 + 2.0 * nf::randn(s, nf::f64);
      case Kind::wide:
        return 100.0 * nf::randn(s, nf::f64);
      case Kind::near_one: {
        // log|product| has a spread of about 1 over the group.
        const double w = std::min(0.1, 2 / std::sqrt(group));
        return (1.0 + w * (2.0 * uniform(s) - 1.0)) * (1.0 - 2.0 * chance(s, 0.05));
      }
      case Kind::ties:
        return uniform_int(s, -1, 2);
      case Kind::sparse:
        return chance(s, 0.7 / group) * signs(s) * (0.5 + uniform(s));
      case Kind::dense:
        return (1.0 - chance(s, 0.7 / group)) * signs(s) * (0.5 + uniform(s));
      case Kind::positive:
        return 0.1 + uniform(s);
    }
  }
  switch (kind) {
    case Kind::normal:
      return u8 ? uniform_int(s, 0, 255) : uniform_int(s, -100, 100);
    case Kind::wide:
      if (u8) return uniform_int(s, 0, 255);
      if (t == nf::i32) return uniform_int(s, -2147483648.0, 2147483647.0);
      return uniform_int(s, -0x1p40, 0x1p40);
    case Kind::near_one: {
      // About 20 factors of 2 per group: products stay far inside i64.
      const nf::Expr v = 1.0 + chance(s, std::min(0.2, 20 / group));
      return u8 ? v : v * (1.0 - 2.0 * chance(s, 0.05));
    }
    case Kind::ties:
      return u8 ? uniform_int(s, 0, 3) : uniform_int(s, -1, 2);
    case Kind::sparse:
      return chance(s, 0.7 / group) * uniform_int(s, 1, 5) * (u8 ? 1.0 : signs(s));
    case Kind::dense:
      return (1.0 - chance(s, 0.7 / group)) * uniform_int(s, 1, 5) * (u8 ? 1.0 : signs(s));
    case Kind::positive:
      return uniform_int(s, 1, 100);
  }
  return uniform(s);
}

// A new array of dtype t on the default device, never all zero. `group` is
// how many elements each result of the reductions under test reads.
nf::Array draw(Kind kind, nf::DType t, const nf::Shape& s, std::int64_t group) {
  nf::Array a = nf::astype(values(kind, t, s, double(std::max<std::int64_t>(group, 1))), t);
  if (a.size() > 0 && !nf::Array(nf::any(a)).item<bool>()) a.reshape({-1})(0) = 1;
  return a;
}

nf::Array make_input(Kind kind, nf::DType t, const nf::Shape& s, std::int64_t group) {
  OnCpu cpu;
  return draw(kind, t, s, group);
}

// ---- layouts and axes ---------------------------------------------------------------

enum class View { plain, transposed, odd_columns };

// An operand of `shape`: a new array, or a view of a larger base.
struct Layout {
  nf::Shape shape;
  View view = View::plain;
};

nf::Shape base_shape(const Layout& l) {
  nf::Shape b = l.shape;
  if (l.view == View::transposed) std::reverse(b.begin(), b.end());
  if (l.view == View::odd_columns) b.back() *= 2;
  return b;
}

// The operand of layout l, taken from its base b (on either device).
nf::Array operand(const Layout& l, const nf::Array& b) {
  if (l.view == View::transposed) return b.T();
  if (l.view == View::odd_columns) {  // numpy b[..., 1::2]
    std::vector<nf::Index> idx(std::size_t(b.ndim() - 1), nf::Index(nf::all));
    idx.push_back(nf::slice(1, nf::none, 2));
    return b.index(idx);
  }
  return b;
}

std::string layout_str(const Layout& l) {
  static const char* names[] = {"", " transposed view", " [..., 1::2] view"};
  return nf::to_string(l.shape) + names[static_cast<int>(l.view)];
}

// Axes to reduce; none: all of them.
using AxisChoice = std::optional<std::vector<int>>;

AxisChoice axes(std::vector<int> a) {
  return AxisChoice(std::move(a));
}
const AxisChoice kAllAxes;

nf::Axes axes_of(const AxisChoice& a) {
  return a ? nf::Axes(*a) : nf::Axes();
}

std::string axes_str(const AxisChoice& a) {
  if (!a) return "all axes";
  std::string s = "axes {";
  for (std::size_t k = 0; k < a->size(); ++k) s += (k ? ", " : "") + std::to_string((*a)[k]);
  return s + "}";
}

// How many elements each result of a reduction over `a` reads.
std::int64_t group_size(const nf::Shape& s, const AxisChoice& a) {
  if (!a) return nf::numel(s);
  std::int64_t n = 1;
  for (int ax : *a) n *= s[std::size_t(ax < 0 ? ax + int(s.size()) : ax)];
  return n;
}

// ---- the op table -------------------------------------------------------------------

// argmin and argmax take one int axis (or none: the flattened array); the
// others take nf::Axes.
template <class F>
nf::Expr call_reduction(F f, const nf::Expr& x, const AxisChoice& ax) {
  if constexpr (std::is_invocable_v<F, const nf::Expr&, nf::Axes>) {
    return f(x, axes_of(ax));
  } else {
    return ax ? f(x, ax->at(0)) : f(x);
  }
}

struct TableOp {
  std::string_view name;
  bool single_axis;  // reduces all axes or one
  nf::Expr (*call)(const nf::Expr&, const AxisChoice&);
};

#define NF_TEST_REDUCER(name) \
  [](const auto&... a) -> decltype(nf::name(a...)) { return nf::name(a...); }

// One row per NF_REDUCTION of the op table: a new reduction is tested here
// as soon as it has a row in kSpecs below.
const std::vector<TableOp> kTable = {
#define NF_REDUCTION(name, ...)                                                             \
  {#name, !std::is_invocable_v<decltype(NF_TEST_REDUCER(name)), const nf::Expr&, nf::Axes>, \
   [](const nf::Expr& x, const AxisChoice& ax) {                                            \
     return call_reduction(NF_TEST_REDUCER(name), x, ax);                                   \
   }},
#include "graph/ops.def"
};

const TableOp& table_op(std::string_view name) {
  for (const TableOp& op : kTable) {
    if (op.name == name) return op;
  }
  throw std::logic_error("no reduction " + std::string(name) + " in the op table");
}

// How an op's rounding error grows, and the inputs that exercise it.
enum class Err { exact, sum, mean, var, std, prod, logsumexp };
struct Spec {
  Kind kind;
  Err err;
};
const std::map<std::string_view, Spec> kSpecs = {
    {"sum", {Kind::wide, Err::sum}},      {"prod", {Kind::near_one, Err::prod}},
    {"mean", {Kind::normal, Err::mean}},  {"var", {Kind::normal, Err::var}},
    {"std", {Kind::normal, Err::std}},    {"min", {Kind::wide, Err::exact}},
    {"max", {Kind::wide, Err::exact}},    {"argmin", {Kind::ties, Err::exact}},
    {"argmax", {Kind::ties, Err::exact}}, {"any", {Kind::sparse, Err::exact}},
    {"all", {Kind::dense, Err::exact}},   {"logsumexp", {Kind::normal, Err::logsumexp}},
    {"norm", {Kind::normal, Err::prod}},  // a sum of positive terms: relative to itself
};

// ---- tolerances ---------------------------------------------------------------------

// The unit roundoff of what a result of dtype t is computed in.
double unit(nf::DType t) {
  return t == nf::f64 ? 0x1p-53 : 0x1p-24;
}

// One ulp of dtype t, relative to the value.
double ulp(nf::DType t) {
  switch (t) {
    case nf::DType::f16:
      return 0x1p-10;
    case nf::DType::bf16:
      return 0x1p-7;
    case nf::DType::f32:
      return 0x1p-23;
    default:
      return 0x1p-52;
  }
}

// Two steps of dtype t's subnormals: a value there has an absolute, not a
// relative, precision (softmax in f16 reaches them).
double subnormal_steps(nf::DType t) {
  switch (t) {
    case nf::DType::f16:
      return 0x1p-23;
    case nf::DType::bf16:
      return 0x1p-132;
    case nf::DType::f32:
      return 0x1p-148;
    default:
      return 0x1p-1073;
  }
}

double sqrt_n(std::int64_t n) {
  return std::sqrt(double(std::max<std::int64_t>(n, 1)));
}

// A result of a reduction over n elements of dtype `in`, accumulated in any
// order. Floating inputs round in random directions, so their errors grow
// like sqrt(n); bool and integer inputs repeat a few addends (var of bools
// adds only p^2 and (1-p)^2), so their errors can all lean one way and grow
// like n.
double reduce_rtol(nf::DType t, nf::DType in, std::int64_t n) {
  const double spread = nf::is_floating(in) ? sqrt_n(n) : double(std::max<std::int64_t>(n, 1));
  return ulp(t) + 4 * unit(t) * spread;
}

// A result to compare: |gpu - cpu| <= rtol * max(|cpu|, scale, floor), plus
// two subnormal steps, for each element; integer and bool results must be
// equal.
struct Out {
  nf::Expr value;
  std::optional<nf::Expr> scale;  // broadcasts to value's shape; evaluated on the CPU only
  double rtol = 0;
  double floor = 0;
};

// op(x) over `ax`, each result reading n elements, with its tolerance.
Out reduction_out(const TableOp& op, const nf::Expr& x, const AxisChoice& ax, std::int64_t n) {
  Out o{op.call(x, ax), std::nullopt};
  const Err err = kSpecs.at(op.name).err;
  const nf::DType t = o.value.dtype();
  if (err == Err::exact || !nf::is_floating(t)) return o;
  o.rtol = reduce_rtol(t, x.dtype(), n);
  if (n == 0) return o;  // the results are 0, 1, NaN or -inf: exact
  // The scales in f64: summing |x| in the input's dtype could overflow f16.
  const nf::Expr x64 = nf::astype(x, nf::f64);
  const nf::Axes a = axes_of(ax);
  switch (err) {
    case Err::sum:
      o.scale = nf::sum(nf::abs(x64), a) / sqrt_n(n);
      break;
    case Err::mean:
      o.scale = nf::mean(nf::abs(x64), a) / sqrt_n(n);
      break;
    case Err::var:  // a sum of squares, however it is arranged
      o.scale = nf::mean(nf::square(x64), a);
      break;
    case Err::std:
      o.scale = nf::sqrt(nf::mean(nf::square(x64), a));
      o.rtol += 8 * unit(t);
      break;
    case Err::logsumexp:
      // The log of a sum of positive terms is off by the sum's relative
      // error; exp on a GPU may lose a few dozen units for larger arguments.
      o.scale = nf::maximum(nf::max(nf::abs(x64), a), 1.0);
      o.rtol += 64 * unit(t);
      break;
    default:  // a product: relative to itself
      break;
  }
  return o;
}

// ---- comparing ----------------------------------------------------------------------

// got (from the GPU) against want (from the CPU in f64). `scale` is empty or
// holds one value per element.
void compare(const nf::Array& got, const nf::Array& want, const std::vector<double>& scale,
             double rtol, double floor) {
  CHECK(nf::name(got.dtype()) == nf::name(want.dtype()));
  CHECK(nf::to_string(got.shape()) == nf::to_string(want.shape()));
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return;
  std::size_t bad = 0, n = 0;
  std::ostringstream first;
  if (!nf::is_floating(want.dtype())) {
    const auto w = want.to_vector<std::int64_t>(), g = got.to_vector<std::int64_t>();
    n = w.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (g[i] != w[i] && bad++ < 3) {
        first << "\n  element " << i << ": cpu " << w[i] << ", gpu " << g[i];
      }
    }
  } else {
    const auto w = want.to_vector<double>(), g = got.to_vector<double>();
    const double tiny = subnormal_steps(want.dtype());
    n = w.size();
    for (std::size_t i = 0; i < n; ++i) {
      const double s = scale.empty() || std::isnan(scale[i]) ? 0 : scale[i];
      const double tol = rtol * std::max({std::fabs(w[i]), s, floor}) + tiny;
      const bool ok = std::isnan(w[i])   ? std::isnan(g[i])
                      : std::isinf(w[i]) ? g[i] == w[i]
                                         : std::fabs(g[i] - w[i]) <= tol;
      if (!ok && bad++ < 3) {
        first.precision(17);
        first << "\n  element " << i << ": cpu " << w[i] << ", gpu " << g[i] << " (tolerance "
              << tol << ")";
      }
    }
  }
  INFO(bad << " of " << n << " elements differ" << first.str());
  CHECK(bad == 0);
}

// Arrays on the CPU and their copies on the GPU.
struct Operands {
  std::vector<nf::Array> host, dev;
};

Operands upload(std::vector<nf::Array> host) {
  Operands o{std::move(host), {}};
  for (const nf::Array& h : o.host) o.dev.push_back(h.to(kGpu));
  return o;
}

using Statement = std::function<std::vector<Out>(const std::vector<nf::Array>&)>;

std::vector<nf::Expr> values_of(const std::vector<Out>& outs) {
  std::vector<nf::Expr> v;
  for (const Out& o : outs) v.push_back(o.value);
  return v;
}

// Runs f on the GPU copies, as one statement (or one statement per result),
// and in f64 on the CPU arrays; compares every result. Where the CPU refuses
// f with a ValueError (a reduction that needs elements over an empty axis),
// the GPU must refuse it too.
void check_statement(const Operands& in, const Statement& f, bool separately = false) {
  std::vector<Out> outs;
  std::vector<nf::Array> want;
  std::vector<std::vector<double>> scales;
  bool refused = false;
  {
    OnCpu cpu(nf::f64);
    try {
      outs = f(in.host);
      std::vector<nf::Expr> roots = values_of(outs);
      for (const Out& o : outs) {
        if (o.scale) roots.push_back(nf::broadcast_to(*o.scale, o.value.shape()));
      }
      want = nf::eval(roots);
      std::size_t k = outs.size();
      for (const Out& o : outs) {
        scales.push_back(o.scale ? want[k++].to_vector<double>() : std::vector<double>());
      }
    } catch (const nf::ValueError&) {
      refused = true;
    }
  }
  if (refused) {
    CHECK_THROWS_AS(nf::eval(values_of(f(in.dev))), nf::ValueError);
    return;
  }
  const std::vector<Out> dev_outs = f(in.dev);
  std::vector<nf::Array> got;
  if (separately) {
    for (const Out& o : dev_outs) got.emplace_back(o.value);
  } else {
    got = nf::eval(values_of(dev_outs));
  }
  for (std::size_t r = 0; r < outs.size(); ++r) {
    INFO("result " << r << ": " << nf::name(want[r].dtype()) << nf::to_string(want[r].shape()));
    CHECK(got[r].device() == kGpu);
    compare(got[r], want[r], scales[r], outs[r].rtol, outs[r].floor);
  }
}

// ---- fused statements ---------------------------------------------------------------

// The mission line. (x - mean) / sd carries the mean's and the variance's
// accumulated errors, scaled by |mean| / sd and |y|: about 1 for these inputs.
Out layernorm(const nf::Expr& x) {
  const nf::DType t = x.dtype();
  const std::int64_t n = x.shape()[1];
  return {nf::reciprocal(nf::sqrt(nf::var(x, 1) + 1e-5f)) * (x - nf::mean(x, 1)), std::nullopt,
          4 * ulp(t) + 8 * unit(t) * sqrt_n(n) + 32 * unit(t), 1.0};
}

// Each term within exp's error (a few dozen units), the row's sum within
// 4 sqrt(n). f16 and bf16 may round an intermediate: 4 ulps.
Out softmax(const nf::Expr& x) {
  const nf::DType t = x.dtype();
  const std::int64_t n = x.shape()[1];
  return {nf::exp(x - nf::max(x, 1)) / nf::sum(nf::exp(x - nf::max(x, 1)), 1), std::nullopt,
          4 * ulp(t) + 4 * unit(t) * sqrt_n(n) + 64 * unit(t)};
}

// logsumexp over rows, written out and as the op.
std::vector<Out> logsumexps(const nf::Expr& x) {
  const nf::DType t = x.dtype();
  const std::int64_t n = x.shape()[1];
  const nf::Expr m = nf::max(x, 1);
  const nf::Expr scale = nf::maximum(nf::max(nf::abs(nf::astype(x, nf::f64)), 1), 1.0);
  const double rtol = 4 * ulp(t) + 4 * unit(t) * sqrt_n(n) + 64 * unit(t);
  return {{m + nf::log(nf::sum(nf::exp(x - m), 1)), scale, rtol},
          {nf::logsumexp(x, 1), scale, rtol}};
}

// x - max is exact in the compute type, so one rounding on either side.
Out minus_max(const nf::Expr& x) {
  return {x - nf::max(x, 1), std::nullopt, ulp(x.dtype())};
}

// Columns of positive p divided by their sums.
Out column_normalise(const nf::Expr& p) {
  const nf::DType t = p.dtype();
  return {p / nf::sum(p, 0), std::nullopt, 4 * ulp(t) + 4 * unit(t) * sqrt_n(p.shape()[0])};
}

// x minus the mean over `ax`: the mean's error is absolute, as large as the
// data's magnitude (about 2 for these inputs) times its relative error.
Out centre(const nf::Expr& x, const AxisChoice& ax) {
  const nf::DType t = x.dtype();
  return {x - nf::mean(x, axes_of(ax)), std::nullopt,
          2 * ulp(t) + 4 * unit(t) * sqrt_n(group_size(x.shape(), ax)), 2.0};
}

}  // namespace

// ---- the tests ----------------------------------------------------------------------

TEST_CASE("reductions: every reduction of the op table has a spec here", "[gpu][reduce]") {
  for (const TableOp& op : kTable) {
    INFO("op " << op.name);
    CHECK(kSpecs.count(op.name) == 1);
  }
}

TEST_CASE("reductions: every op x dtype x axes on small and medium shapes and views",
          "[gpu][reduce]") {
  const std::vector<AxisChoice> two_d = {axes({0}), axes({1}), kAllAxes};
  const std::vector<AxisChoice> three_d = {axes({0}), axes({1}),    axes({-1}),
                                           kAllAxes,  axes({0, 2}), axes({1, 2})};
  const std::vector<Layout> layouts = {
      {{1, 1}},
      {{1, 3001}},
      {{3001, 1}},
      {{7, 13, 5}},
      {{128, 784}},
      {{784, 128}, View::transposed},
      {{7, 13, 5}, View::odd_columns},
  };
  for (const TableOp& op : kTable) {
    for (const nf::DType t : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nf::name(t)) {
        REQUIRE(kSpecs.count(op.name) == 1);
        nf::seed(1000 + 16 * std::uint64_t(&op - kTable.data()) + std::uint64_t(t));
        for (const Layout& layout : layouts) {
          for (const AxisChoice& ax : layout.shape.size() == 3 ? three_d : two_d) {
            if (op.single_axis && ax && ax->size() > 1) continue;
            INFO(op.name << "(" << nf::name(t) << " " << layout_str(layout) << ", " << axes_str(ax)
                         << ")");
            const std::int64_t n = group_size(layout.shape, ax);
            const Operands in =
                upload({make_input(kSpecs.at(op.name).kind, t, base_shape(layout), n)});
            check_statement(in, [&](const std::vector<nf::Array>& a) {
              return std::vector<Out>{reduction_out(op, operand(layout, a[0]), ax, n)};
            });
          }
        }
      }
    }
  }
}

TEST_CASE("reductions: f32 sum, mean, var, max, argmax and logsumexp on large shapes and views",
          "[gpu][reduce][big]") {
  // 512x65536: rows too long for one block, shared by a cluster on sm_90.
  const std::vector<Layout> layouts = {
      {{32768, 1024}},
      {{1024, 32768}},
      {{512, 65536}},
      {{1, std::int64_t(1) << 24}},
      {{4096, 4096}, View::odd_columns},
      {{4096, 4096}, View::transposed},
  };
  for (std::size_t l = 0; l < layouts.size(); ++l) {
    const Layout& layout = layouts[l];
    DYNAMIC_SECTION(layout_str(layout)) {
      nf::seed(2000 + l);
      const Operands in = upload({make_input(Kind::normal, nf::f32, base_shape(layout), 1)});
      for (const AxisChoice& ax : {axes({0}), axes({1}), kAllAxes}) {
        INFO(axes_str(ax));
        const std::int64_t n = group_size(layout.shape, ax);
        // One statement per reduction on the GPU; the CPU computes them together.
        check_statement(
            in,
            [&](const std::vector<nf::Array>& a) {
              const nf::Array x = operand(layout, a[0]);
              std::vector<Out> outs;
              for (const char* name : {"sum", "mean", "var", "max", "argmax", "logsumexp"}) {
                outs.push_back(reduction_out(table_op(name), x, ax, n));
              }
              return outs;
            },
            true);
      }
    }
  }
}

// Every reduction x dtype x axes over one of the large shapes and views,
// whose kernels walk their rows in other ways (prefetched, shared by a
// cluster, split over blocks). Inputs are drawn on the GPU, where the CPU
// would take minutes over them, and copied to the CPU for the reference:
// both compute from the same values. Each layout is a test case of its own
// ([every1] to [every6], hidden from a plain run), which ctest runs side by side.
namespace {

void every_op_dtype_axes(const Layout& layout, std::uint64_t seed) {
  for (const nf::DType t : nf::all_dtypes) {
    // Inputs by kind and, for kinds drawn to suit it, group size.
    std::map<std::pair<Kind, std::int64_t>, Operands> inputs;
    const auto input = [&](Kind kind, std::int64_t n) -> const Operands& {
      const bool by_group = kind == Kind::near_one || kind == Kind::sparse || kind == Kind::dense;
      const auto key = std::make_pair(kind, by_group ? n : -1);
      auto it = inputs.find(key);
      if (it == inputs.end()) {
        nf::seed(seed + 8 * std::uint64_t(kind) + std::uint64_t(t));
        const nf::Array d = draw(kind, t, base_shape(layout), n);
        it = inputs.emplace(key, Operands{{d.to(kCpu)}, {d}}).first;
      }
      return it->second;
    };
    for (const AxisChoice& ax : {axes({0}), axes({1}), kAllAxes}) {
      const std::int64_t n = group_size(layout.shape, ax);
      for (const TableOp& op : kTable) {
        INFO(op.name << "(" << nf::name(t) << " " << layout_str(layout) << ", " << axes_str(ax)
                     << ")");
        check_statement(input(kSpecs.at(op.name).kind, n), [&](const std::vector<nf::Array>& a) {
          return std::vector<Out>{reduction_out(op, operand(layout, a[0]), ax, n)};
        });
      }
    }
  }
}

}  // namespace

TEST_CASE("reductions: every op x dtype x axes on 32768x1024", "[.][gpu][reduce][big][every1]") {
  every_op_dtype_axes({{32768, 1024}}, 9000);
}
TEST_CASE("reductions: every op x dtype x axes on 1024x32768", "[.][gpu][reduce][big][every2]") {
  every_op_dtype_axes({{1024, 32768}}, 9100);
}
TEST_CASE("reductions: every op x dtype x axes on 512x65536", "[.][gpu][reduce][big][every3]") {
  every_op_dtype_axes({{512, 65536}}, 9200);
}
TEST_CASE("reductions: every op x dtype x axes on 1x2^24", "[.][gpu][reduce][big][every4]") {
  every_op_dtype_axes({{1, std::int64_t(1) << 24}}, 9300);
}
TEST_CASE("reductions: every op x dtype x axes on a 4096x4096 view of odd columns",
          "[.][gpu][reduce][big][every5]") {
  every_op_dtype_axes({{4096, 4096}, View::odd_columns}, 9400);
}
TEST_CASE("reductions: every op x dtype x axes on a 4096x4096 transposed view",
          "[.][gpu][reduce][big][every6]") {
  every_op_dtype_axes({{4096, 4096}, View::transposed}, 9500);
}

TEST_CASE("reductions: fused statements match the CPU in f64", "[gpu][reduce][fused]") {
  const std::vector<Layout> layouts = {
      {{1, 1}},
      {{7, 13}},
      {{1, 3001}},
      {{3001, 1}},
      {{128, 784}},
      {{784, 128}, View::transposed},
      {{128, 392}, View::odd_columns},
  };
  for (const nf::DType t : {nf::f32, nf::f64, nf::f16, nf::bf16}) {
    for (std::size_t l = 0; l < layouts.size(); ++l) {
      const Layout& layout = layouts[l];
      INFO(nf::name(t) << " " << layout_str(layout));
      nf::seed(3000 + 16 * l + std::uint64_t(t));
      const nf::Shape base = base_shape(layout);
      const Operands in =
          upload({make_input(Kind::normal, t, base, 1), make_input(Kind::positive, t, base, 1)});
      const auto one = [&](Out (*f)(const nf::Expr&), int input) {
        return [&layout, f, input](const std::vector<nf::Array>& a) {
          return std::vector<Out>{f(operand(layout, a[std::size_t(input)]))};
        };
      };
      {
        INFO("the mission line: layer normalisation of every row");
        check_statement(in, one(layernorm, 0));
      }
      {
        INFO("softmax of every row");
        check_statement(in, one(softmax, 0));
      }
      {
        INFO("logsumexp of every row, written out and as the op");
        check_statement(
            in, [&](const std::vector<nf::Array>& a) { return logsumexps(operand(layout, a[0])); });
      }
      {
        INFO("x - max(x, 1)");
        check_statement(in, one(minus_max, 0));
      }
      {
        INFO("columns divided by their sums");
        check_statement(in, one(column_normalise, 1));
      }
      {
        INFO("mean and var of the same rows in one statement");
        check_statement(in, [&](const std::vector<nf::Array>& a) {
          const nf::Array x = operand(layout, a[0]);
          const std::int64_t n = layout.shape[1];
          return std::vector<Out>{reduction_out(table_op("mean"), x, axes({1}), n),
                                  reduction_out(table_op("var"), x, axes({1}), n)};
        });
      }
    }
  }
}

TEST_CASE("reductions: fused statements on large shapes and views", "[gpu][reduce][fused][big]") {
  // 1024x32768 and 1000x30000: rows prefetched into shared memory, the
  // second with a part-full last group of threads.
  const std::vector<Layout> layouts = {
      {{32768, 1024}},
      {{1024, 32768}},
      {{1000, 30000}},
      {{512, 65536}},
      {{4096, 4096}, View::odd_columns},
      {{4096, 4096}, View::transposed},
  };
  for (std::size_t l = 0; l < layouts.size(); ++l) {
    const Layout& layout = layouts[l];
    DYNAMIC_SECTION(layout_str(layout)) {
      nf::seed(4000 + l);
      const Operands in = upload({make_input(Kind::normal, nf::f32, base_shape(layout), 1)});
      check_statement(
          in,
          [&](const std::vector<nf::Array>& a) {
            const nf::Array x = operand(layout, a[0]);
            std::vector<Out> outs = logsumexps(x);
            outs.push_back(layernorm(x));
            outs.push_back(softmax(x));
            return outs;
          },
          true);
    }
  }
}

TEST_CASE("reductions: in-place statements give what they give out of place",
          "[gpu][reduce][inplace]") {
  struct Update {
    const char* name;
    Kind kind;
    std::function<Out(const nf::Array&)> f;    // the value written back
    std::function<void(nf::Array&)> compound;  // the same as a compound assignment, if any
    bool square_only = false;
  };
  const std::vector<Update> updates = {
      {"A = reciprocal(sqrt(var(A, 1) + eps)) * (A - mean(A, 1))", Kind::normal,
       [](const nf::Array& a) { return layernorm(a); }, nullptr},
      {"A = A - mean(A, 0)", Kind::normal, [](const nf::Array& a) { return centre(a, axes({0})); },
       [](nf::Array& a) { a -= nf::mean(a, 0); }},
      {"A = A - mean(A)", Kind::normal, [](const nf::Array& a) { return centre(a, kAllAxes); },
       [](nf::Array& a) { a -= nf::mean(a); }},
      {"A = softmax(A)", Kind::normal, [](const nf::Array& a) { return softmax(a); }, nullptr},
      {"A = A / sum(A, 0)", Kind::positive, [](const nf::Array& a) { return column_normalise(a); },
       [](nf::Array& a) { a /= nf::sum(a, 0); }},
      {"A = A + A.T()", Kind::normal,
       [](const nf::Array& a) {
         return Out{a + a.T(), std::nullopt, ulp(a.dtype())};
       },
       [](nf::Array& a) { a += a.T(); }, true},
  };
  const std::vector<nf::Shape> shapes = {{7, 13}, {13, 13}, {128, 784}, {2048, 2048}};
  for (std::size_t u = 0; u < updates.size(); ++u) {
    const Update& up = updates[u];
    for (const nf::Shape& shape : shapes) {
      if (up.square_only && shape[0] != shape[1]) continue;
      INFO(up.name << " on " << nf::to_string(shape));
      nf::seed(5000 + 8 * u + shape[0]);
      const nf::Array host = make_input(up.kind, nf::f32, shape, 1);
      Out o = up.f(host);
      nf::Array want;
      {
        OnCpu cpu(nf::f64);
        want = o.value;
      }
      {
        INFO("rebinding: A = f(A) leaves the old array to its other handles");
        nf::Array a = host.to(kGpu);
        const nf::Array alias = a;
        a = up.f(a).value;
        compare(a, want, {}, o.rtol, o.floor);
        CHECK(alias.to_vector<double>() == host.to_vector<double>());
      }
      {
        INFO("through a view: A[...] = f(A) writes where it reads");
        nf::Array a = host.to(kGpu);
        const nf::Array alias = a;
        a.index(std::vector<nf::Index>(2, nf::Index(nf::all))) = up.f(a).value;
        compare(a, want, {}, o.rtol, o.floor);
        CHECK(alias.to_vector<double>() == a.to_vector<double>());
      }
      if (up.compound) {
        INFO("as a compound assignment");
        nf::Array a = host.to(kGpu);
        up.compound(a);
        compare(a, want, {}, o.rtol, o.floor);
      }
    }
  }
}

// A kernel may start before the one ahead of it has finished
// (src/cuda/kernels.cpp). Statements queued back to back, each reading what
// the one before wrote and writing what it read, must still see each other's
// writes: a stale read would put elements off by far more than 1e-4.
TEST_CASE("reductions: statements queued back to back see each other's writes",
          "[gpu][reduce][order]") {
  nf::seed(7100);
  const nf::Array host = make_input(Kind::normal, nf::f32, {1024, 4096}, 1);
  const auto rounds = [](nf::Array x) {
    nf::Array y;
    for (int r = 0; r < 6; ++r) {
      y = softmax(x).value;
      x = x * 0.5f + y * 10.0f;
      x -= nf::mean(x, 0);
    }
    return x;
  };
  nf::Array want;
  {
    OnCpu cpu(nf::f64);
    want = rounds(host);
  }
  const nf::Array got = rounds(host.to(kGpu));
  CHECK(got.device() == kGpu);
  compare(got, want, {}, 1e-4, 1.0);
}

TEST_CASE("reductions: full f32 sums and means give the same bits on every run", "[gpu][reduce]") {
  for (const nf::Shape& shape : {nf::Shape{std::int64_t(1) << 24}, nf::Shape{4096, 4096}}) {
    INFO(nf::to_string(shape));
    nf::seed(6000 + shape.size());
    const nf::Array host = make_input(Kind::normal, nf::f32, shape, 1);
    const Operands in = upload({host});
    const nf::Array elsewhere = host.to(kGpu);  // the same values at another address
    const std::int64_t n = host.size();
    for (const char* name : {"sum", "mean"}) {
      INFO(name);
      const TableOp& op = table_op(name);
      const auto run = [&](const nf::Array& x) {
        return nf::Array(op.call(x, kAllAxes)).item<float>();
      };
      const float first = run(in.dev[0]), again = run(in.dev[0]), moved = run(elsewhere);
      CHECK(std::memcmp(&first, &again, sizeof first) == 0);
      CHECK(std::memcmp(&first, &moved, sizeof first) == 0);
      check_statement(in, [&](const std::vector<nf::Array>& a) {
        return std::vector<Out>{reduction_out(op, a[0], kAllAxes, n)};
      });
    }
  }
}

TEST_CASE("reductions: argmin and argmax give the first index of tied extremes", "[gpu][reduce]") {
  SECTION("four values repeated, against the CPU") {
    const std::vector<std::pair<Layout, AxisChoice>> cases = {
        {{{128, 784}}, axes({0})},    {{{128, 784}}, axes({1})},
        {{{128, 784}}, kAllAxes},     {{{784, 128}, View::transposed}, axes({1})},
        {{{7, 13, 5}}, axes({1})},    {{{1, 3001}}, kAllAxes},
        {{{32768, 1024}}, axes({0})}, {{{1024, 32768}}, axes({1})},
    };
    for (const nf::DType t : {nf::f32, nf::f16, nf::bf16, nf::i32, nf::u8, nf::bool_}) {
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const auto& [layout, ax] = cases[c];
        INFO(nf::name(t) << " " << layout_str(layout) << ", " << axes_str(ax));
        nf::seed(7000 + 16 * c + std::uint64_t(t));
        const Operands in = upload({make_input(Kind::ties, t, base_shape(layout), 1)});
        check_statement(in, [&](const std::vector<nf::Array>& a) {
          const nf::Array x = operand(layout, a[0]);
          const std::int64_t n = group_size(layout.shape, ax);
          return std::vector<Out>{reduction_out(table_op("argmax"), x, ax, n),
                                  reduction_out(table_op("argmin"), x, ax, n)};
        });
      }
    }
  }
  SECTION("extremes planted far apart in long rows and columns") {
    nf::seed(7500);
    // Values in (0, 0.5]; 1 and -1 are planted, each three times.
    const auto base = [](const nf::Shape& s) {
      OnCpu cpu;
      return nf::Array(0.5f * nf::rand(s));
    };
    nf::Array row = base({1, std::int64_t(1) << 24});
    nf::Array tall = base({32768, 1024});
    nf::Array wide = base({1024, 32768});
    nf::Array longest = base({512, 65536});
    {
      OnCpu cpu;
      for (int c : {16777215, 9000001, 123457}) row(0, c) = 1;
      for (int c : {16000000, 777777, 4000000}) row(0, c) = -1;
      for (int r : {30000, 17, 20000}) tall(r, 5) = 1;
      for (int r : {31000, 16385, 24000}) tall(r, 1000) = -1;
      for (int c : {32767, 12345, 20000}) wide(3, c) = 1;
      for (int c : {30000, 16383, 16384}) wide(1000, c) = -1;
      // In different blocks of a cluster: the first of equals in a later block.
      for (int c : {65535, 40000, 50000}) longest(7, c) = 1;
      for (int c : {8192, 8191, 65000}) longest(300, c) = -1;
    }
    const nf::Array r = row.to(kGpu), t = tall.to(kGpu), w = wide.to(kGpu);
    CHECK(nf::argmax(r).item<std::int64_t>() == 123457);
    CHECK(nf::argmin(r).item<std::int64_t>() == 777777);
    CHECK(nf::argmax(r, 1).item<std::int64_t>() == 123457);
    CHECK(nf::argmin(r, 1).item<std::int64_t>() == 777777);
    CHECK(nf::argmax(t).item<std::int64_t>() == 17 * 1024 + 5);
    CHECK(nf::argmin(t).item<std::int64_t>() == 16385 * 1024 + 1000);
    CHECK(nf::argmax(t, 0).to_vector<std::int64_t>()[5] == 17);
    CHECK(nf::argmin(t, 0).to_vector<std::int64_t>()[1000] == 16385);
    CHECK(nf::argmax(w, 1).to_vector<std::int64_t>()[3] == 12345);
    CHECK(nf::argmin(w, 1).to_vector<std::int64_t>()[1000] == 16383);
    CHECK(nf::argmax(w.T(), 0).to_vector<std::int64_t>()[3] == 12345);
    const nf::Array l = longest.to(kGpu);
    CHECK(nf::argmax(l, 1).to_vector<std::int64_t>()[7] == 40000);
    CHECK(nf::argmin(l, 1).to_vector<std::int64_t>()[300] == 8191);
  }
}

TEST_CASE("reductions: NaN propagates as on the CPU", "[gpu][reduce]") {
  for (const nf::DType t : {nf::f32, nf::f16, nf::f64}) {
    nf::seed(8000 + std::uint64_t(t));
    nf::Array host = make_input(Kind::normal, t, {64, 300}, 1);
    {
      OnCpu cpu;
      const std::pair<int, int> at[] = {{3, 7}, {3, 200}, {10, 299}, {50, 0}};
      for (auto [r, c] : at) host(r, c) = NAN;
    }
    const Operands in = upload({host});
    for (const AxisChoice& ax : {axes({0}), axes({1}), kAllAxes}) {
      INFO(nf::name(t) << " " << axes_str(ax));
      check_statement(in, [&](const std::vector<nf::Array>& a) {
        std::vector<Out> outs;
        for (const char* name :
             {"sum", "mean", "var", "min", "max", "argmin", "argmax", "logsumexp"}) {
          outs.push_back(reduction_out(table_op(name), a[0], ax, group_size(a[0].shape(), ax)));
        }
        return outs;
      });
    }
  }
}

TEST_CASE("reductions: empty arrays and axes do what they do on the CPU", "[gpu][reduce]") {
  const std::vector<std::pair<nf::Shape, AxisChoice>> cases = {
      {{0}, kAllAxes},    {{0}, axes({0})},    {{3, 0}, axes({1})},    {{3, 0}, axes({0})},
      {{0, 3}, kAllAxes}, {{0, 3}, axes({1})}, {{2, 0, 3}, axes({1})}, {{2, 0, 3}, axes({0, 2})},
  };
  for (const TableOp& op : kTable) {
    for (const nf::DType t : {nf::f32, nf::f16, nf::i32, nf::bool_}) {
      for (const auto& [shape, ax] : cases) {
        if (op.single_axis && ax && ax->size() > 1) continue;
        INFO(op.name << "(" << nf::name(t) << nf::to_string(shape) << ", " << axes_str(ax) << ")");
        const Operands in = upload({make_input(Kind::normal, t, shape, 1)});
        check_statement(in, [&](const std::vector<nf::Array>& a) {
          return std::vector<Out>{reduction_out(op, a[0], ax, group_size(shape, ax))};
        });
      }
    }
  }
}
