// Every elementwise op of the op table (src/graph/ops.def) x every dtype,
// checked against references computed here in double (or exactly in int64),
// on random inputs over broadcast 0-d/1-D/2-D/3-D shapes, views and empty
// arrays. An op added to the table without a reference here fails the tests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "op_calls.hpp"
#include "reference.hpp"

namespace {

using nf::DType;
using nftest::Domain;
using nftest::Input;
using nftest::View;
using I64 = std::int64_t;

// ---- the op table, as numfuse's public functions ------------------------------

using Args = std::vector<nf::Expr>;

using TableOp = nf::test::ElementwiseCall;
const std::vector<TableOp>& kTable = nf::test::elementwise_calls();
const TableOp& table_op(std::string_view name) {
  return nf::test::elementwise_call(name);
}

// ---- references -------------------------------------------------------------------

// How the operand and result dtypes follow from the promoted input dtype p,
// written out from numpy's rules.
enum class Rule {
  same,      // operands p, result p
  floating,  // operands and result: numpy's float for p (i32 -> f64, u8 -> f16)
  divide,    // operands and result: p if floating, else f64
  compare,   // operands p, result bool
  logical,   // operands bool, result bool
  select,    // where: condition bool, values p (p promotes the values only)
};

struct ElemRef {
  int arity;
  Rule rule;
  bool numeric;                 // rejects bool operands with nf::DTypeError
  double (*fd)(const double*);  // on floating operands (bool results: 0 or 1)
  I64 (*fi)(const I64*);        // on integer or bool operands, before wraparound
  std::vector<Domain> dom;      // per operand; the last one repeats
};

DType operand_dtype(Rule r, DType p) {
  switch (r) {
    case Rule::floating:
      return nftest::float_of(p);
    case Rule::divide:
      return nftest::is_float(p) ? p : nf::f64;
    case Rule::logical:
      return nf::bool_;
    default:
      return p;
  }
}

DType result_dtype(Rule r, DType p) {
  if (r == Rule::compare || r == Rule::logical) return nf::bool_;
  return operand_dtype(r, p);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// numpy's % on floats: fmod, moved to the divisor's sign.
double py_fmod(double a, double b) {
  double m = std::fmod(a, b);
  if (b == 0) return m;
  if (m != 0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}

// numpy's % on integers: Python's, and x % 0 == 0.
I64 py_imod(I64 a, I64 b) {
  if (b == 0 || b == -1) return 0;
  I64 m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

// Repeated multiplication with wraparound (by squaring); b >= 0.
I64 ipow(I64 a, I64 b) {
  I64 r = 1;
  for (; b > 0; b >>= 1, a = nftest::mul_w(a, a))
    if (b & 1) r = nftest::mul_w(r, a);
  return r;
}

double b2d(bool b) {
  return b ? 1.0 : 0.0;
}

double fmin_nan(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? kNaN : std::min(a, b);
}
double fmax_nan(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? kNaN : std::max(a, b);
}

Domain dom(double lo, double hi, I64 ilo, I64 ihi) {
  Domain d;
  d.lo = lo, d.hi = hi, d.ilo = ilo, d.ihi = ihi;
  return d;
}

const std::map<std::string_view, ElemRef>& refs() {
  // Domains: where the op is defined and its result representable in the
  // result dtype (u8/bool compute in f16), with ties, zeros and specials
  // where they matter to the op.
  Domain def;
  Domain full;  // integers wrap: every value of the dtype
  full.full_ints = true;
  Domain full_sp = full;
  full_sp.specials = true;
  Domain full_zero = full;
  full_zero.zero_frac = 0.2;
  full_zero.specials = true;
  const Domain pos = dom(0.05, 10, 1, 1000);
  const Domain log1p_d = dom(-0.9, 10, 0, 1000);
  const Domain expd = dom(-5, 5, -10, 10);
  const Domain smalld = dom(-5, 5, -20, 20);
  const Domain unit = dom(-1, 1, -1, 1);
  const Domain tand = dom(-1.4, 1.4, -1000, 1000);
  Domain rounding = dom(-10, 10, -1000, 1000);
  rounding.half_frac = 0.5;
  Domain nonzero = dom(0.05, 10, 1, 1000);
  nonzero.signed_magnitude = true;
  Domain divisor = dom(0.5, 5, 1, 100);
  divisor.signed_magnitude = true;
  const Domain pow_base = dom(0.1, 3, -50, 50);
  const Domain pow_exp = dom(-3, 3, 0, 12);
  Domain specials = def;
  specials.specials = true;
  Domain ties = dom(-3, 3, -3, 3);  // equal operands are common
  ties.half_frac = 1;
  ties.specials = true;
  Domain logical = dom(-1, 1, -2, 2);
  logical.zero_frac = 0.4;
  logical.specials = true;

  using X = const double*;
  using N = const I64*;
  using nftest::add_w;
  using nftest::mul_w;
  using nftest::sub_w;
  static const std::map<std::string_view, ElemRef> r = {
      // clang-format off
      {"copy", {1, Rule::same, false, [](X x) { return x[0]; }, [](N x) { return x[0]; }, {full_sp}}},
      {"negative", {1, Rule::same, true, [](X x) { return -x[0]; }, [](N x) { return sub_w(0, x[0]); }, {full_sp}}},
      {"abs", {1, Rule::same, false, [](X x) { return std::fabs(x[0]); }, [](N x) { return x[0] < 0 ? sub_w(0, x[0]) : x[0]; }, {full_sp}}},
      {"sign", {1, Rule::same, true, [](X x) { return std::isnan(x[0]) ? kNaN : x[0] > 0 ? 1.0 : x[0] < 0 ? -1.0 : x[0]; },
                [](N x) { return I64{x[0] > 0} - I64{x[0] < 0}; }, {full_zero}}},
      {"exp", {1, Rule::floating, false, [](X x) { return std::exp(x[0]); }, nullptr, {expd}}},
      {"exp2", {1, Rule::floating, false, [](X x) { return std::exp2(x[0]); }, nullptr, {expd}}},
      {"log", {1, Rule::floating, false, [](X x) { return std::log(x[0]); }, nullptr, {pos}}},
      {"log2", {1, Rule::floating, false, [](X x) { return std::log2(x[0]); }, nullptr, {pos}}},
      {"log10", {1, Rule::floating, false, [](X x) { return std::log10(x[0]); }, nullptr, {pos}}},
      {"log1p", {1, Rule::floating, false, [](X x) { return std::log1p(x[0]); }, nullptr, {log1p_d}}},
      {"expm1", {1, Rule::floating, false, [](X x) { return std::expm1(x[0]); }, nullptr, {expd}}},
      {"sqrt", {1, Rule::floating, false, [](X x) { return std::sqrt(x[0]); }, nullptr, {pos}}},
      {"rsqrt", {1, Rule::floating, false, [](X x) { return 1 / std::sqrt(x[0]); }, nullptr, {pos}}},
      {"cbrt", {1, Rule::floating, false, [](X x) { return std::cbrt(x[0]); }, nullptr, {def}}},
      {"reciprocal", {1, Rule::floating, false, [](X x) { return 1 / x[0]; }, nullptr, {nonzero}}},
      {"square", {1, Rule::same, true, [](X x) { return x[0] * x[0]; }, [](N x) { return mul_w(x[0], x[0]); }, {full}}},
      {"sin", {1, Rule::floating, false, [](X x) { return std::sin(x[0]); }, nullptr, {def}}},
      {"cos", {1, Rule::floating, false, [](X x) { return std::cos(x[0]); }, nullptr, {def}}},
      {"tan", {1, Rule::floating, false, [](X x) { return std::tan(x[0]); }, nullptr, {tand}}},
      {"asin", {1, Rule::floating, false, [](X x) { return std::asin(x[0]); }, nullptr, {unit}}},
      {"acos", {1, Rule::floating, false, [](X x) { return std::acos(x[0]); }, nullptr, {unit}}},
      {"atan", {1, Rule::floating, false, [](X x) { return std::atan(x[0]); }, nullptr, {smalld}}},
      {"sinh", {1, Rule::floating, false, [](X x) { return std::sinh(x[0]); }, nullptr, {expd}}},
      {"cosh", {1, Rule::floating, false, [](X x) { return std::cosh(x[0]); }, nullptr, {expd}}},
      {"tanh", {1, Rule::floating, false, [](X x) { return std::tanh(x[0]); }, nullptr, {smalld}}},
      {"sigmoid", {1, Rule::floating, false, [](X x) { return 1 / (1 + std::exp(-x[0])); }, nullptr, {smalld}}},
      {"relu", {1, Rule::same, true, [](X x) { return x[0] > 0 ? x[0] : 0.0; }, [](N x) { return std::max<I64>(x[0], 0); }, {full}}},
      {"gelu", {1, Rule::floating, false, [](X x) { return 0.5 * x[0] * std::erfc(-x[0] / std::sqrt(2.0)); }, nullptr, {smalld}}},
      {"gelu_tanh", {1, Rule::floating, false, [](X x) { return 0.5 * x[0] * (1 + std::tanh(std::sqrt(2 / M_PI) * (x[0] + 0.044715 * x[0] * x[0] * x[0]))); }, nullptr, {smalld}}},
      {"softplus", {1, Rule::floating, false, [](X x) { return std::max(x[0], 0.0) + std::log1p(std::exp(-std::fabs(x[0]))); }, nullptr, {smalld}}},
      {"erf", {1, Rule::floating, false, [](X x) { return std::erf(x[0]); }, nullptr, {smalld}}},
      {"floor", {1, Rule::same, true, [](X x) { return std::floor(x[0]); }, [](N x) { return x[0]; }, {rounding}}},
      {"ceil", {1, Rule::same, true, [](X x) { return std::ceil(x[0]); }, [](N x) { return x[0]; }, {rounding}}},
      {"round", {1, Rule::same, true, [](X x) { return std::nearbyint(x[0]); }, [](N x) { return x[0]; }, {rounding}}},
      {"trunc", {1, Rule::same, true, [](X x) { return std::trunc(x[0]); }, [](N x) { return x[0]; }, {rounding}}},
      {"isnan", {1, Rule::compare, false, [](X x) { return b2d(std::isnan(x[0])); }, [](N) { return I64{0}; }, {specials}}},
      {"isinf", {1, Rule::compare, false, [](X x) { return b2d(std::isinf(x[0])); }, [](N) { return I64{0}; }, {specials}}},
      {"isfinite", {1, Rule::compare, false, [](X x) { return b2d(std::isfinite(x[0])); }, [](N) { return I64{1}; }, {specials}}},
      {"logical_not", {1, Rule::logical, false, nullptr, [](N x) { return I64{x[0] == 0}; }, {logical}}},

      {"add", {2, Rule::same, false, [](X x) { return x[0] + x[1]; }, [](N x) { return add_w(x[0], x[1]); }, {full}}},
      {"subtract", {2, Rule::same, true, [](X x) { return x[0] - x[1]; }, [](N x) { return sub_w(x[0], x[1]); }, {full}}},
      {"multiply", {2, Rule::same, false, [](X x) { return x[0] * x[1]; }, [](N x) { return mul_w(x[0], x[1]); }, {full}}},
      {"divide", {2, Rule::divide, false, [](X x) { return x[0] / x[1]; }, nullptr, {def, divisor}}},
      {"remainder", {2, Rule::same, true, [](X x) { return py_fmod(x[0], x[1]); }, [](N x) { return py_imod(x[0], x[1]); },
                     {dom(-10, 10, -1000, 1000), divisor}}},
      {"power", {2, Rule::same, true, [](X x) { return std::pow(x[0], x[1]); }, [](N x) { return ipow(x[0], x[1]); }, {pow_base, pow_exp}}},
      {"atan2", {2, Rule::floating, false, [](X x) { return std::atan2(x[0], x[1]); }, nullptr, {def}}},
      {"minimum", {2, Rule::same, false, [](X x) { return fmin_nan(x[0], x[1]); }, [](N x) { return std::min(x[0], x[1]); }, {full_sp}}},
      {"maximum", {2, Rule::same, false, [](X x) { return fmax_nan(x[0], x[1]); }, [](N x) { return std::max(x[0], x[1]); }, {full_sp}}},
      {"less", {2, Rule::compare, false, [](X x) { return b2d(x[0] < x[1]); }, [](N x) { return I64{x[0] < x[1]}; }, {ties}}},
      {"less_equal", {2, Rule::compare, false, [](X x) { return b2d(x[0] <= x[1]); }, [](N x) { return I64{x[0] <= x[1]}; }, {ties}}},
      {"equal", {2, Rule::compare, false, [](X x) { return b2d(x[0] == x[1]); }, [](N x) { return I64{x[0] == x[1]}; }, {ties}}},
      {"not_equal", {2, Rule::compare, false, [](X x) { return b2d(x[0] != x[1]); }, [](N x) { return I64{x[0] != x[1]}; }, {ties}}},
      {"greater", {2, Rule::compare, false, [](X x) { return b2d(x[0] > x[1]); }, [](N x) { return I64{x[0] > x[1]}; }, {ties}}},
      {"greater_equal", {2, Rule::compare, false, [](X x) { return b2d(x[0] >= x[1]); }, [](N x) { return I64{x[0] >= x[1]}; }, {ties}}},
      {"logical_and", {2, Rule::logical, false, nullptr, [](N x) { return I64{x[0] && x[1]}; }, {logical}}},
      {"logical_or", {2, Rule::logical, false, nullptr, [](N x) { return I64{x[0] || x[1]}; }, {logical}}},

      {"where", {3, Rule::select, false, [](X x) { return x[0] != 0 ? x[1] : x[2]; }, [](N x) { return x[0] ? x[1] : x[2]; },
                 {logical, full_sp}}},
      {"clip", {3, Rule::same, true, [](X x) { return std::min(std::max(x[0], x[1]), x[2]); },
                [](N x) { return std::min(std::max(x[0], x[1]), x[2]); }, {full, def}}},
      // clang-format on
  };
  return r;
}

const ElemRef& ref_of(std::string_view name) {
  const auto it = refs().find(name);
  if (it == refs().end()) throw std::logic_error("no reference for " + std::string(name));
  return it->second;
}

const Domain& domain_of(const ElemRef& ref, std::size_t arg) {
  return ref.dom[std::min(arg, ref.dom.size() - 1)];
}

// ---- checking one evaluation --------------------------------------------------------

// An operand: an array, or a C++ scalar (weak: it takes its kind's dtype from
// the arrays it meets, as Python scalars do in NumPy 2).
struct Operand {
  nf::Expr expr;
  nftest::Values vals;
  nf::Shape shape;
  DType dtype;  // of an array; i64 or f64 for a scalar
  bool weak = false;
};

Operand operand(const nf::Array& a) {
  return {a, nftest::read_values(a), a.shape(), a.dtype()};
}
Operand scalar(I64 v) {
  return {v, {{double(v)}, {v}}, {}, nf::i64, true};
}
Operand scalar(double v) {
  return {v, {{v}, {}}, {}, nf::f64, true};
}

// NEP 50: weak scalars count by kind only. An int scalar keeps the arrays'
// dtype (bool arrays go to i64), a float scalar keeps a floating dtype and
// turns integers and bool into f64.
DType promote(const std::vector<const Operand*>& ops) {
  std::vector<DType> strong;
  bool weak_int = false, weak_float = false;
  for (const Operand* o : ops) {
    if (!o->weak)
      strong.push_back(o->dtype);
    else if (o->dtype == nf::f64)
      weak_float = true;
    else
      weak_int = true;
  }
  // Only scalars: numpy's default int and float.
  DType p = !strong.empty() ? nftest::promote(strong) : weak_float ? nf::f64 : nf::i64;
  if (weak_float && !nftest::is_float(p)) p = nf::f64;
  if (weak_int && p == nf::bool_) p = nf::i64;
  return p;
}

// Evaluates `op` on `in` and compares dtype, shape and every value with the
// reference.
void check(const TableOp& op, const std::vector<Operand>& in) {
  const ElemRef& ref = ref_of(op.name);
  std::vector<const Operand*> values;
  std::vector<nf::Shape> shapes;
  Args args;
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (ref.rule != Rule::select || j > 0) values.push_back(&in[j]);
    shapes.push_back(in[j].shape);
    args.push_back(in[j].expr);
  }
  const DType p = promote(values);
  const nf::Shape out = nftest::broadcast(shapes);

  if (ref.numeric && p == nf::bool_) {
    CHECK_THROWS_AS(nf::Array(op.call(args)), nf::DTypeError);
    return;
  }
  const DType want = result_dtype(ref.rule, p);
  nf::Array r;
  try {
    const nf::Expr e = op.call(args);
    CHECK(nftest::dname(e.dtype()) == nftest::dname(want));
    CHECK(nftest::shape_str(e.shape()) == nftest::shape_str(out));
    r = e;
  } catch (const std::exception& ex) {
    FAIL_CHECK("threw: " << ex.what());
    return;
  }
  CHECK(nftest::dname(r.dtype()) == nftest::dname(want));
  CHECK(nftest::shape_str(r.shape()) == nftest::shape_str(out));
  if (r.dtype() != want || r.shape() != out) return;

  // Operands cast to the dtypes the op computes in; integer operands stay exact.
  const DType value_dt = operand_dtype(ref.rule, p);
  const bool int_path = !nftest::is_float(value_dt);
  std::vector<std::vector<I64>> maps;
  for (const auto& a : in) maps.push_back(nftest::broadcast_map(a.shape, out));
  const auto n = static_cast<std::size_t>(nftest::count(out));
  std::vector<double> want_d(n);
  std::vector<I64> want_i(n);
  for (std::size_t k = 0; k < n; ++k) {
    double xd[3];
    I64 xi[3];
    for (std::size_t j = 0; j < in.size(); ++j) {
      const auto src = static_cast<std::size_t>(maps[j][k]);
      const double v = in[j].vals.d[src];
      const bool to_bool = ref.rule == Rule::logical || (ref.rule == Rule::select && j == 0);
      if (to_bool) {
        xd[j] = v != 0;  // NaN is true
        xi[j] = v != 0;
      } else {
        xd[j] = nftest::round_to(value_dt, v);
        xi[j] = int_path ? in[j].vals.i[src] : 0;
      }
    }
    if (int_path) {
      want_i[k] = nftest::wrap_to(want, ref.fi(xi));
    } else if (nftest::is_float(want)) {
      want_d[k] = nftest::round_to(want, ref.fd(xd));
    } else {
      want_i[k] = static_cast<I64>(ref.fd(xd));
    }
  }

  // Compare, describing the first few mismatches with their operands.
  std::ostringstream bad;
  int nbad = 0;
  const auto got_d = nftest::is_float(want) ? r.to_vector<double>() : std::vector<double>();
  const auto got_i = nftest::is_float(want) ? std::vector<I64>() : r.to_vector<I64>();
  const nftest::Tol tol = nftest::tol_for(want);
  for (std::size_t k = 0; k < n; ++k) {
    const bool ok =
        nftest::is_float(want)
            ? nftest::close(got_d[k], want_d[k], tol)
            : (want == nf::bool_ ? (got_i[k] != 0) == (want_i[k] != 0) : got_i[k] == want_i[k]);
    if (ok || ++nbad > 5) continue;
    bad << "\n  element " << k << ": " << op.name << "(";
    for (std::size_t j = 0; j < in.size(); ++j) {
      const auto src = static_cast<std::size_t>(maps[j][k]);
      bad << (j ? ", " : "")
          << (in[j].vals.i.empty() ? nftest::num(in[j].vals.d[src])
                                   : std::to_string(in[j].vals.i[src]));
    }
    bad << ") expected "
        << (nftest::is_float(want) ? nftest::num(want_d[k]) : std::to_string(want_i[k])) << " got "
        << (nftest::is_float(want) ? nftest::num(got_d[k]) : std::to_string(got_i[k]));
  }
  INFO(nbad << " of " << n << " elements differ:" << bad.str());
  CHECK(nbad == 0);
}

std::string describe(const TableOp& op, const std::vector<nf::Array>& in,
                     const std::vector<Input>& specs) {
  std::ostringstream s;
  s << op.name << "(";
  for (std::size_t j = 0; j < in.size(); ++j) {
    s << (j ? ", " : "") << nftest::dname(in[j].dtype()) << " " << nftest::input_str(specs[j]);
  }
  return s.str() + ")";
}

// Random inputs of the given dtypes and shapes for `op`, then check().
void run(const TableOp& op, const std::vector<DType>& dts, const std::vector<Input>& specs,
         std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<nf::Array> in;
  for (std::size_t j = 0; j < specs.size(); ++j) {
    in.push_back(nftest::random_array(rng, domain_of(ref_of(op.name), j), dts[j], specs[j]));
  }
  INFO(describe(op, in, specs));
  std::vector<Operand> ops;
  for (const auto& a : in) ops.push_back(operand(a));
  check(op, ops);
}

// Shapes per arity: same shapes, broadcasting among 0-d/1-D/2-D/3-D, views
// (transposed, strided, reversed), size 1, odd sizes and empty arrays.
const std::vector<std::vector<Input>>& shape_cases(int arity) {
  static const std::vector<std::vector<Input>> unary = {
      {{{13}}},
      {{{5, 7}}},
      {{{3, 4, 5}}},
      {{{}}},
      {{{1}}},
      {{{0}}},
      {{{3, 0}}},
      {{{5, 7}, View::transposed}},
      {{{2, 3, 4}, View::transposed}},
      {{{4, 6}, View::strided}},
      {{{9}, View::reversed}},
      {{{37, 65}}},
  };
  static const std::vector<std::vector<Input>> binary = {
      {{{13}}, {{13}}},
      {{{7, 1, 5}}, {{3, 1}}},
      {{{13}}, {{4, 13}}},
      {{{1}}, {{2, 3, 4}}},
      {{{3, 4}}, {{}}},
      {{{}}, {{3, 4}}},
      {{{}}, {{}}},
      {{{0}}, {{0}}},
      {{{3, 0}}, {{1}}},
      {{{0}}, {{}}},
      {{{5, 7}, View::transposed}, {{7}}},
      {{{4, 3, 2}, View::transposed}, {{4, 3, 2}}},
      {{{4, 6}, View::strided}, {{4, 1}}},
      {{{9}, View::reversed}, {{9}, View::strided}},
      {{{3, 5}, View::transposed}, {{3, 5}, View::strided}},
      {{{37, 65}}, {{65}}},
  };
  static const std::vector<std::vector<Input>> ternary = {
      {{{13}}, {{13}}, {{13}}},
      {{{3, 1}}, {{4}}, {{}}},
      {{{2, 1, 4}}, {{3, 1}}, {{1, 4}}},
      {{{}}, {{}}, {{}}},
      {{{0}}, {{0}}, {{}}},
      {{{3, 0}}, {{1}}, {{3, 1}}},
      {{{5, 7}, View::transposed}, {{7}}, {{5, 1}}},
      {{{4, 6}, View::strided}, {{}}, {{6}, View::reversed}},
      {{{}}, {{2, 3}, View::transposed}, {{3}}},
      {{{37, 65}}, {{37, 1}}, {{65}}},
  };
  return arity == 1 ? unary : arity == 2 ? binary : ternary;
}

}  // namespace

TEST_CASE("elementwise: every op of the table has a reference", "[ops]") {
  for (const auto& op : kTable) {
    INFO("op " << op.name);
    const auto it = refs().find(op.name);
    REQUIRE(it != refs().end());
    CHECK(it->second.arity == op.arity);
  }
  for (const auto& [name, ref] : refs()) {
    INFO("reference " << name << " has no row in ops.def");
    CHECK(std::any_of(kTable.begin(), kTable.end(),
                      [&](const TableOp& op) { return op.name == name; }));
  }
}

TEST_CASE("elementwise: every op x every dtype x shapes", "[ops]") {
  for (const auto& op : kTable) {
    for (const DType t : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nftest::dname(t)) {
        REQUIRE(refs().count(op.name) == 1);
        const auto& cases = shape_cases(op.arity);
        for (std::size_t c = 0; c < cases.size(); ++c) {
          run(op, std::vector<DType>(cases[c].size(), t), cases[c],
              nftest::seed_of(std::string(op.name), static_cast<std::uint32_t>(t),
                              static_cast<std::uint32_t>(c)));
        }
      }
    }
  }
}

TEST_CASE("elementwise: every op with a C++ scalar operand", "[ops]") {
  // Each position in turn is a weak int or float scalar; the others are arrays.
  for (const auto& op : kTable) {
    if (op.arity == 1) continue;
    for (const DType t : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nftest::dname(t) << " with scalars") {
        std::mt19937 rng(nftest::seed_of(std::string(op.name), static_cast<std::uint32_t>(t)));
        for (int pos = 0; pos < op.arity; ++pos) {
          for (const bool fl : {false, true}) {
            std::vector<Operand> in;
            std::ostringstream what;
            what << op.name << "(";
            for (int j = 0; j < op.arity; ++j) {
              if (j == pos) {
                in.push_back(fl ? scalar(1.5) : scalar(I64{3}));
                what << (j ? ", " : "") << (fl ? "1.5" : "3");
              } else {
                const Input spec{{3, 4}};
                in.push_back(operand(nftest::random_array(
                    rng, domain_of(ref_of(op.name), static_cast<std::size_t>(j)), t, spec)));
                what << (j ? ", " : "") << nftest::dname(t) << " (3, 4)";
              }
            }
            INFO(what.str() << ")");
            check(op, in);
          }
        }
      }
    }
  }
}

TEST_CASE("elementwise: every op with one array as every operand", "[ops]") {
  for (const auto& op : kTable) {
    if (op.arity == 1) continue;
    for (const DType t : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nftest::dname(t) << " x" << op.arity) {
        std::mt19937 rng(nftest::seed_of(std::string(op.name), static_cast<std::uint32_t>(t), 7));
        // The last operand's domain suits every position (divisors, exponents).
        const Domain& dom = domain_of(ref_of(op.name), static_cast<std::size_t>(op.arity - 1));
        const nf::Array a = nftest::random_array(rng, dom, t, {{5, 3}});
        INFO(op.name << " of one " << nftest::dname(t) << " (5, 3) array as every operand");
        check(op, std::vector<Operand>(static_cast<std::size_t>(op.arity), operand(a)));
      }
    }
  }
}

TEST_CASE("elementwise: binary ops promote every pair of dtypes as numpy does", "[ops]") {
  for (const auto& op : kTable) {
    if (op.arity != 2) continue;
    for (const DType a : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nftest::dname(a) << " with each dtype") {
        for (const DType b : nf::all_dtypes) {
          run(op, {a, b}, {{{4, 5}}, {{5}}},
              nftest::seed_of(std::string(op.name), static_cast<std::uint32_t>(a),
                              static_cast<std::uint32_t>(b)));
        }
      }
    }
  }
}

TEST_CASE("elementwise: where and clip promote mixed dtypes", "[ops]") {
  for (const DType a : nf::all_dtypes) {
    for (const DType b : nf::all_dtypes) {
      DYNAMIC_SECTION(nftest::dname(a) << " with " << nftest::dname(b)) {
        const auto s =
            nftest::seed_of("mixed", static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
        // The condition's dtype never matters; the values' dtypes do.
        run(table_op("where"), {b, a, b}, {{{3, 1}}, {{4}}, {{3, 4}}}, s);
        run(table_op("clip"), {a, b, b}, {{{3, 4}}, {{4}}, {{}}}, s + 1);
      }
    }
  }
}

namespace {

nf::Array f64s(std::vector<double> v) {
  return nf::array(v);
}
nf::Array of(std::vector<double> v, DType t) {
  return nf::array(v).astype(t);
}

void check_values(const nf::Array& r, DType t, const std::vector<double>& want) {
  CHECK(nftest::dname(r.dtype()) == nftest::dname(t));
  const auto got = r.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("element " << k << ": expected " << nftest::num(want[k]) << " got "
                    << nftest::num(got[k]));
    CHECK(nftest::close(got[k], want[k], nftest::tol_for(t)));
    if (want[k] == 0 && !std::isnan(got[k])) CHECK(std::signbit(got[k]) == std::signbit(want[k]));
  }
}

}  // namespace

TEST_CASE("elementwise: C++ scalars are weak (NumPy 2 / NEP 50)", "[ops]") {
  const nf::Array x32 = of({1.5, -2, 3}, nf::f32);
  const nf::Array i32 = of({7, -8, 2147483647}, nf::i32);
  const nf::Array u8 = of({10, 200, 0}, nf::u8);

  SECTION("a floating array keeps its dtype with a C++ float") {
    check_values(nf::Array(x32 * 0.5), nf::f32, {0.75, -1, 1.5});
    check_values(nf::Array(1.0 / of({2, 4, 8}, nf::f16)), nf::f16, {0.5, 0.25, 0.125});
    check_values(nf::Array(of({1, 2, 3}, nf::bf16) * 2), nf::bf16, {2, 4, 6});
  }
  SECTION("an integer array keeps its dtype with a C++ integer, wrapping") {
    check_values(nf::Array(i32 + 1), nf::i32, {8, -7, -2147483648.0});
    check_values(nf::Array(2 - i32), nf::i32, {-5, 10, -2147483645.0});
    check_values(nf::Array(u8 + 255), nf::u8, {9, 199, 255});
    check_values(nf::Array(i32 + true), nf::i32, {8, -7, -2147483648.0});
  }
  SECTION("an integer array with a C++ float gives f64") {
    check_values(nf::Array(i32 * 0.5), nf::f64, {3.5, -4, 1073741823.5});
    check_values(nf::Array(u8 * 1.5), nf::f64, {15, 300, 0});
    check_values(nf::Array(of({1, 2}, nf::i64) + 1.5), nf::f64, {2.5, 3.5});
  }
  SECTION("a bool array with a C++ integer gives i64, with a float f64") {
    const nf::Array b = nf::array(std::vector<bool>{true, false});
    check_values(nf::Array(b + 1), nf::i64, {2, 1});
    check_values(nf::Array(b * 1.5), nf::f64, {1.5, 0});
  }
  SECTION("an integer scalar that does not fit the array's dtype throws ValueError") {
    CHECK_THROWS_AS(nf::Array(u8 + 300), nf::ValueError);
    CHECK_THROWS_AS(nf::Array(u8 + -1), nf::ValueError);
    CHECK_THROWS_AS(nf::Array(i32 + 3000000000LL), nf::ValueError);
  }
  SECTION("a 0-d array is not weak") {
    const nf::Array s = nf::array(std::vector<double>{0.5}, nf::Shape{});
    check_values(nf::Array(x32 * s), nf::f64, {0.75, -1, 1.5});
    const nf::Array s32 = nf::array(std::vector<float>{0.5f}, nf::Shape{});
    check_values(nf::Array(x32 * s32), nf::f32, {0.75, -1, 1.5});
    check_values(nf::Array(u8 + nf::array(std::vector<std::int32_t>{1}, nf::Shape{})), nf::i32,
                 {11, 201, 1});
  }
}

TEST_CASE("elementwise: documented edge semantics", "[ops]") {
  SECTION("round is half to even") {
    for (DType t : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
      INFO(nftest::dname(t));
      check_values(nf::Array(nf::round(of({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5}, t))), t,
                   {-2, -2, -0.0, 0, 2, 2, 4});
    }
  }
  SECTION("integer remainder has the divisor's sign and x % 0 == 0") {
    for (DType t : {nf::i32, nf::i64}) {
      INFO(nftest::dname(t));
      check_values(nf::Array(of({-7, 7, -7, 7, 5, 0}, t) % of({3, -3, -3, 3, 0, 0}, t)), t,
                   {2, -2, -1, 1, 0, 0});
    }
    check_values(nf::Array(of({7, 200, 9}, nf::u8) % of({3, 0, 9}, nf::u8)), nf::u8, {1, 0, 0});
  }
  SECTION("float remainder has the divisor's sign") {
    for (DType t : {nf::f16, nf::f32, nf::f64}) {
      INFO(nftest::dname(t));
      check_values(nf::Array(of({-7.5, 7.5, -7.5, 7.5, -4, 4}, t) % of({2, -2, -2, 2, 2, -2}, t)),
                   t, {0.5, -0.5, -1.5, 1.5, 0, -0.0});
    }
  }
  SECTION("minimum and maximum propagate NaN") {
    const double nan = std::nan("");
    for (DType t : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
      INFO(nftest::dname(t));
      const nf::Array a = of({1, nan, 3, nan}, t), b = of({nan, 2, 1, nan}, t);
      check_values(nf::Array(nf::minimum(a, b)), t, {nan, nan, 1, nan});
      check_values(nf::Array(nf::maximum(a, b)), t, {nan, nan, 3, nan});
    }
  }
  SECTION("integer arithmetic wraps") {
    check_values(nf::Array(of({2147483647, -2147483648.0}, nf::i32) + of({1, -1}, nf::i32)),
                 nf::i32, {-2147483648.0, 2147483647});
    check_values(nf::Array(of({65536}, nf::i32) * of({65536}, nf::i32)), nf::i32, {0});
    check_values(nf::Array(of({250, 3}, nf::u8) + of({10, 0}, nf::u8)), nf::u8, {4, 3});
    check_values(nf::Array(of({3, 5}, nf::u8) - of({5, 3}, nf::u8)), nf::u8, {254, 2});
    check_values(nf::Array(-of({1, 0}, nf::u8)), nf::u8, {255, 0});
    check_values(nf::Array(nf::power(of({3, 2, -2, 0}, nf::i32), of({21, 10, 3, 0}, nf::i32))),
                 nf::i32, {1870418611, 1024, -8, 1});
    const auto big = nf::array(std::vector<std::int64_t>{INT64_MAX, 3037000500LL});
    const nf::Array r = big + 1;
    CHECK(r.to_vector<std::int64_t>() == std::vector<std::int64_t>{INT64_MIN, 3037000501LL});
    const nf::Array sq = nf::square(big);
    CHECK(sq.to_vector<std::int64_t>() ==
          std::vector<std::int64_t>{1, nftest::mul_w(3037000500LL, 3037000500LL)});
  }
  SECTION("reciprocal and divide of integers are true division") {
    check_values(nf::Array(nf::reciprocal(of({2, -4}, nf::i32))), nf::f64, {0.5, -0.25});
    check_values(nf::Array(of({7, -7}, nf::i64) / of({2, 2}, nf::i64)), nf::f64, {3.5, -3.5});
    check_values(nf::Array(nf::reciprocal(of({2, 4}, nf::u8))), nf::f16, {0.5, 0.25});
  }
  SECTION("float division by zero gives inf and NaN") {
    const double inf = INFINITY;
    check_values(nf::Array(f64s({1, -1, 0}) / f64s({0, 0, 0})), nf::f64, {inf, -inf, std::nan("")});
  }
  SECTION("where casts its condition to bool") {
    const nf::Array c = f64s({0.0, 0.5, std::nan(""), -0.0});
    check_values(nf::Array(nf::where(c, of({1, 2, 3, 4}, nf::i32), of({-1, -2, -3, -4}, nf::i32))),
                 nf::i32, {-1, 2, 3, -4});
  }
  SECTION("numeric ops reject bool with DTypeError") {
    const nf::Array b = nf::array(std::vector<bool>{true, false});
    CHECK_THROWS_AS(nf::Array(-b), nf::DTypeError);
    CHECK_THROWS_AS(nf::Array(b - b), nf::DTypeError);
    CHECK_THROWS_AS(nf::Array(nf::floor(b)), nf::DTypeError);
    CHECK_THROWS_AS(nf::Array(nf::clip(b, b, b)), nf::DTypeError);
    check_values(nf::Array(b + b), nf::bool_, {1, 0});
    check_values(nf::Array(b * nf::array(std::vector<bool>{false, false})), nf::bool_, {0, 0});
  }
  SECTION("operand shapes that do not broadcast throw ShapeError") {
    CHECK_THROWS_AS(nf::add(f64s({1, 2, 3}), f64s({1, 2})), nf::ShapeError);
    CHECK_THROWS_AS(nf::where(f64s({1, 2, 3}), f64s({1, 2}), 0.0), nf::ShapeError);
  }
}
