// Every reduction of the op table (src/graph/ops.def) x every dtype x axis
// choices, checked against references computed here by plain loops in double
// (or exactly in int64), on random inputs, views, 0-d and empty arrays.
// Reductions keep the reduced axes with length 1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "../on_device.hpp"
#include "reference.hpp"

namespace {

using nf::DType;
using nftest::Domain;
using nftest::Input;
using nftest::View;
using I64 = std::int64_t;

// Axes to reduce: all of them, or a list (negative counts from the end).
struct AxisSpec {
  bool all = true;
  std::vector<int> axes;
};

AxisSpec axes(std::vector<int> a) {
  return {false, std::move(a)};
}
const AxisSpec kAll{};

std::string axes_str(const AxisSpec& ax) {
  if (ax.all) return "all axes";
  std::string s = "axes {";
  for (std::size_t k = 0; k < ax.axes.size(); ++k)
    s += (k ? ", " : "") + std::to_string(ax.axes[k]);
  return s + "}";
}

// ---- the op table, as numfuse's public functions ------------------------------

// argmin/argmax take one int axis (or none: the flattened array); the others
// take nf::Axes.
template <class F>
nf::Expr reduce(F f, const nf::Expr& x, const AxisSpec& ax) {
  if constexpr (std::is_invocable_v<F, const nf::Expr&, nf::Axes>) {
    return ax.all ? f(x, nf::Axes{}) : f(x, nf::Axes(ax.axes));
  } else {
    if (ax.all) return f(x);
    if (ax.axes.size() != 1) throw std::logic_error("this reduction takes one axis");
    return f(x, ax.axes[0]);
  }
}

struct TableOp {
  std::string_view name;
  bool single_axis;  // reduces all axes or one
  nf::Expr (*call)(const nf::Expr&, const AxisSpec&);
};

#define NF_TEST_REDUCER(name) \
  [](const auto&... a) -> decltype(nf::name(a...)) { return nf::name(a...); }

// Each row calls nf::<name>(x, axes): a table row without a public function of
// its name does not compile.
const std::vector<TableOp> kTable = {
#define NF_REDUCTION(name, ...)                                                             \
  {#name, !std::is_invocable_v<decltype(NF_TEST_REDUCER(name)), const nf::Expr&, nf::Axes>, \
   [](const nf::Expr& x, const AxisSpec& ax) { return reduce(NF_TEST_REDUCER(name), x, ax); }},
#include "graph/ops.def"
};

// ---- references -------------------------------------------------------------------

// How the result dtype follows from the input dtype p, from numpy's rules.
enum class Rule {
  accumulate,  // bool and integers accumulate in i64; floats stay
  average,     // bool and integers give f64; floats stay
  same,        // result p
  index,       // result i64
  logical,     // operands cast to bool, result bool
  floating,    // numpy's float for p (i32 -> f64, u8 -> f16)
};

using Group = std::vector<double>;
using IGroup = std::vector<I64>;

struct RedRef {
  Rule rule;
  bool needs_elements;  // an empty reduced axis throws ValueError
  bool exact;           // the result is an input element, an index or a bool
  double (*fd)(const Group&);
  I64 (*fi)(const IGroup&);  // integers exactly; null: integers computed in floats
  // What the rounding error of a result scales with, beside the result itself.
  double (*scale)(const Group&);
  Domain dom;
};

DType result_dtype(Rule r, DType p) {
  switch (r) {
    case Rule::accumulate:
      return nftest::is_float(p) ? p : nf::i64;
    case Rule::average:
      return nftest::is_float(p) ? p : nf::f64;
    case Rule::index:
      return nf::i64;
    case Rule::logical:
      return nf::bool_;
    case Rule::floating:
      return nftest::float_of(p);
    default:
      return p;
  }
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

double sum_d(const Group& g) {
  double s = 0;
  for (double v : g) s += v;
  return s;
}
double mean_d(const Group& g) {
  return sum_d(g) / static_cast<double>(g.size());
}
double var_d(const Group& g, int ddof) {
  if (g.empty()) return kNaN;
  const double m = mean_d(g);
  double s = 0;
  for (double v : g) s += (v - m) * (v - m);
  return s / static_cast<double>(static_cast<int>(g.size()) - ddof);
}
double sum_abs(const Group& g) {
  double s = 0;
  for (double v : g) s += std::fabs(v);
  return s;
}
double mean_sq(const Group& g) {
  double s = 0;
  for (double v : g) s += v * v;
  return g.empty() ? 0 : s / static_cast<double>(g.size());
}
template <class G, class Less>
std::size_t first_best(const G& g, Less less) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < g.size(); ++k)
    if (less(g[k], g[best])) best = k;
  return best;
}

const std::map<std::string_view, RedRef>& refs() {
  Domain def;
  Domain full;  // integers over the dtype's whole range
  full.full_ints = true;
  Domain near_one;  // products stay representable
  near_one.lo = 0.9, near_one.hi = 1.1, near_one.ilo = 1, near_one.ihi = 3;
  near_one.signed_magnitude = true;
  Domain ties;  // equal elements are common
  ties.lo = -3, ties.hi = 3, ties.ilo = -3, ties.ihi = 3, ties.half_frac = 1;
  Domain sparse;  // mostly zeros
  sparse.lo = -1, sparse.hi = 1, sparse.ilo = -3, sparse.ihi = 3, sparse.zero_frac = 0.85;
  Domain dense = sparse;  // mostly nonzero
  dense.zero_frac = 0.15;
  Domain expd;
  expd.lo = -5, expd.hi = 5, expd.ilo = -20, expd.ihi = 20;

  static const std::map<std::string_view, RedRef> r = {
      // clang-format off
      {"sum", {Rule::accumulate, false, false, sum_d,
               [](const IGroup& g) { I64 s = 0; for (I64 v : g) s = nftest::add_w(s, v); return s; }, sum_abs, full}},
      {"prod", {Rule::accumulate, false, false,
                [](const Group& g) { double p = 1; for (double v : g) p *= v; return p; },
                [](const IGroup& g) { I64 p = 1; for (I64 v : g) p = nftest::mul_w(p, v); return p; },
                [](const Group&) { return 0.0; }, near_one}},
      {"mean", {Rule::average, false, false, mean_d, nullptr, [](const Group& g) { return sum_abs(g) / static_cast<double>(g.size()); }, full}},
      {"var", {Rule::average, false, false, [](const Group& g) { return var_d(g, 0); }, nullptr, mean_sq, def}},
      {"std", {Rule::average, false, false, [](const Group& g) { return std::sqrt(var_d(g, 0)); }, nullptr,
               [](const Group& g) { return std::sqrt(mean_sq(g)); }, def}},
      {"min", {Rule::same, true, true, [](const Group& g) { return g[first_best(g, std::less<>())]; },
               [](const IGroup& g) { return g[first_best(g, std::less<>())]; }, nullptr, full}},
      {"max", {Rule::same, true, true, [](const Group& g) { return g[first_best(g, std::greater<>())]; },
               [](const IGroup& g) { return g[first_best(g, std::greater<>())]; }, nullptr, full}},
      {"argmin", {Rule::index, true, true, [](const Group& g) { return static_cast<double>(first_best(g, std::less<>())); },
                  [](const IGroup& g) { return static_cast<I64>(first_best(g, std::less<>())); }, nullptr, ties}},
      {"argmax", {Rule::index, true, true, [](const Group& g) { return static_cast<double>(first_best(g, std::greater<>())); },
                  [](const IGroup& g) { return static_cast<I64>(first_best(g, std::greater<>())); }, nullptr, ties}},
      {"any", {Rule::logical, false, true,
               [](const Group& g) { return std::any_of(g.begin(), g.end(), [](double v) { return v != 0; }) ? 1.0 : 0.0; },
               nullptr, nullptr, sparse}},
      {"all", {Rule::logical, false, true,
               [](const Group& g) { return std::all_of(g.begin(), g.end(), [](double v) { return v != 0; }) ? 1.0 : 0.0; },
               nullptr, nullptr, dense}},
      {"logsumexp", {Rule::floating, false, false,
                     [](const Group& g) {
                       if (g.empty()) return -std::numeric_limits<double>::infinity();
                       const double m = *std::max_element(g.begin(), g.end());
                       double s = 0;
                       for (double v : g) s += std::exp(v - m);
                       return m + std::log(s);
                     },
                     nullptr,
                     [](const Group& g) { double m = 1; for (double v : g) m = std::max(m, std::fabs(v)); return m; },
                     expd}},
      {"norm", {Rule::average, false, false,
                [](const Group& g) { double s = 0; for (double v : g) s += v * v; return std::sqrt(s); },
                nullptr, [](const Group& g) { return std::sqrt(mean_sq(g) * static_cast<double>(g.size())); }, def}},
      // clang-format on
  };
  return r;
}

const RedRef& ref_of(std::string_view name) {
  const auto it = refs().find(name);
  if (it == refs().end()) throw std::logic_error("no reference for " + std::string(name));
  return it->second;
}

// ---- checking one evaluation --------------------------------------------------------

// Evaluates `op` on `x` over `ax` and compares dtype, kept-dims shape and
// every value with the reference.
void check(const TableOp& op, const nf::Array& x, const AxisSpec& ax) {
  const RedRef& ref = ref_of(op.name);
  const DType p = x.dtype();
  const DType want = result_dtype(ref.rule, p);
  const nf::Shape& in = x.shape();
  const int nd = static_cast<int>(in.size());
  std::vector<bool> reduced(in.size(), ax.all);
  for (int a : ax.axes) reduced.at(static_cast<std::size_t>(a < 0 ? a + nd : a)) = true;
  nf::Shape out = in;
  std::int64_t group_size = 1;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (reduced[k]) group_size *= in[k], out[k] = 1;
  }
  const auto n_out = static_cast<std::size_t>(nftest::count(out));

  if (ref.needs_elements && group_size == 0 && n_out > 0) {
    CHECK_THROWS_AS(nf::Array(op.call(x, ax)), nf::ValueError);
    return;
  }
  nf::Array r;
  try {
    const nf::Expr e = op.call(x, ax);
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

  // The elements of each output's group, in C order of the input (so a
  // group's position is the index along one reduced axis, or the flat index).
  const nftest::Values v = nftest::read_values(x);
  std::vector<std::vector<std::size_t>> groups(n_out);
  {
    std::vector<std::int64_t> ostride(in.size(), 0), idx(in.size(), 0);
    std::int64_t s = 1;
    for (std::size_t k = in.size(); k-- > 0;) {
      ostride[k] = reduced[k] ? 0 : s;
      s *= out[k];
    }
    const auto n_in = nftest::count(in);
    for (std::int64_t f = 0; f < n_in; ++f) {
      std::int64_t o = 0;
      for (std::size_t k = 0; k < in.size(); ++k) o += idx[k] * ostride[k];
      groups[static_cast<std::size_t>(o)].push_back(static_cast<std::size_t>(f));
      for (std::size_t k = in.size(); k-- > 0;) {
        if (++idx[k] < in[k]) break;
        idx[k] = 0;
      }
    }
  }

  const bool int_path = !nftest::is_float(p) && ref.fi != nullptr;
  const DType operand = ref.rule == Rule::floating ? nftest::float_of(p) : p;
  const nftest::Tol tol = nftest::tol_for(want);
  const double rtol = tol.rtol + static_cast<double>(group_size) * nftest::compute_eps(want);
  const auto got_d = nftest::is_float(want) ? r.to_vector<double>() : std::vector<double>();
  const auto got_i = nftest::is_float(want) ? std::vector<I64>() : r.to_vector<I64>();
  std::ostringstream bad;
  int nbad = 0;
  for (std::size_t o = 0; o < n_out; ++o) {
    Group g;
    IGroup gi;
    for (std::size_t f : groups[o]) {
      g.push_back(ref.rule == Rule::logical ? (v.d[f] != 0) : nftest::round_to(operand, v.d[f]));
      if (int_path) gi.push_back(v.i[f]);
    }
    bool ok;
    std::string want_s, got_s;
    if (nftest::is_float(want)) {
      const double w = nftest::round_to(want, ref.fd(g));
      const double scale = ref.scale ? ref.scale(g) : 0;
      ok = nftest::close(got_d[o], w, ref.exact ? nftest::Tol{0, 0} : nftest::Tol{rtol, tol.atol},
                         scale);
      want_s = nftest::num(w), got_s = nftest::num(got_d[o]);
    } else {
      I64 w = int_path ? ref.fi(gi) : static_cast<I64>(ref.fd(g));
      w = nftest::wrap_to(want, w);
      ok = want == nf::bool_ ? (got_i[o] != 0) == (w != 0) : got_i[o] == w;
      want_s = std::to_string(w), got_s = std::to_string(got_i[o]);
    }
    if (ok || ++nbad > 5) continue;
    bad << "\n  output " << o << " over {";
    for (std::size_t k = 0; k < groups[o].size() && k < 12; ++k) {
      const std::size_t f = groups[o][k];
      bad << (k ? ", " : "") << (v.i.empty() ? nftest::num(v.d[f]) : std::to_string(v.i[f]));
    }
    bad << (groups[o].size() > 12 ? ", ...}" : "}") << ": expected " << want_s << " got " << got_s;
  }
  INFO(nbad << " of " << n_out << " outputs differ:" << bad.str());
  CHECK(nbad == 0);
}

struct Config {
  Input in;
  AxisSpec ax;
};

// Axis choices over 0-d/1-D/2-D/3-D inputs, views, size 1, odd and larger
// sizes, and empty arrays and axes.
const std::vector<Config>& configs() {
  static const std::vector<Config> c = [] {
    std::vector<Config> v;
    const auto add = [&v](nf::Shape s, AxisSpec ax, View view = View::plain) {
      v.push_back(Config{Input{std::move(s), view}, std::move(ax)});
    };
    add({13}, kAll);
    add({13}, axes({0}));
    add({13}, axes({-1}));
    add({5, 7}, axes({0}));
    add({5, 7}, axes({1}));
    add({5, 7}, kAll);
    add({5, 7}, axes({0, 1}));
    add({3, 4, 5}, kAll);
    add({3, 4, 5}, axes({0}));
    add({3, 4, 5}, axes({1}));
    add({3, 4, 5}, axes({-1}));
    add({3, 4, 5}, axes({0, 2}));
    add({5, 7}, axes({1}), View::transposed);
    add({5, 7}, axes({0}), View::transposed);
    add({4, 3, 2}, axes({0, 2}), View::transposed);
    add({4, 3, 2}, axes({-2}), View::transposed);
    add({6, 4}, axes({0}), View::strided);
    add({6, 4}, axes({1}), View::strided);
    add({9}, kAll, View::reversed);
    add({5, 3}, axes({0}), View::reversed);
    add({}, kAll);
    add({1}, kAll);
    add({1, 1}, axes({0}));
    add({64, 65}, axes({0}));
    add({64, 65}, kAll);
    add({0}, kAll);
    add({0}, axes({0}));
    add({3, 0}, axes({1}));
    add({3, 0}, axes({0}));
    add({0, 3}, kAll);
    add({2, 0, 3}, axes({0, 2}));
    return v;
  }();
  return c;
}

}  // namespace

TEST_CASE("reduction: every op of the table has a reference", "[ops]") {
  for (const auto& op : kTable) {
    INFO("op " << op.name);
    CHECK(refs().count(op.name) == 1);
  }
  for (const auto& [name, ref] : refs()) {
    INFO("reference " << name << " has no row in ops.def");
    CHECK(std::any_of(kTable.begin(), kTable.end(),
                      [&](const TableOp& op) { return op.name == name; }));
  }
}

TEST_CASE("reduction: every op x every dtype x axes", "[ops]") {
  for (const auto& op : kTable) {
    for (const DType t : nf::all_dtypes) {
      DYNAMIC_SECTION(op.name << " " << nftest::dname(t)) {
        REQUIRE(refs().count(op.name) == 1);
        const RedRef& ref = ref_of(op.name);
        for (std::size_t c = 0; c < configs().size(); ++c) {
          const Config& cfg = configs()[c];
          if (op.single_axis && cfg.ax.axes.size() > 1) continue;
          std::mt19937 rng(nftest::seed_of(std::string(op.name), static_cast<std::uint32_t>(t),
                                           static_cast<std::uint32_t>(c)));
          const nf::Array x = nftest::random_array(rng, ref.dom, t, cfg.in);
          INFO(op.name << "(" << nftest::dname(t) << " " << nftest::input_str(cfg.in) << ", "
                       << axes_str(cfg.ax) << ")");
          check(op, x, cfg.ax);
        }
      }
    }
  }
}

namespace {

nf::Array of(std::vector<double> v, DType t, nf::Shape s) {
  return nf::array(v, s).astype(t);
}

}  // namespace

TEST_CASE("reduction: documented edge semantics", "[ops]") {
  SECTION("var and std take ddof") {
    for (DType t : {nf::f32, nf::f64, nf::i32}) {
      INFO(nftest::dname(t));
      const nf::Array x = of({1, 2, 4, 7, 3, 3, 3, 9}, t, {2, 4});
      const DType rt = t == nf::i32 ? nf::f64 : t;
      const nf::Array v1 = nf::var(x, 1, 1), s1 = nf::std(x, {}, 1);
      CHECK(nftest::dname(v1.dtype()) == nftest::dname(rt));
      CHECK(nftest::shape_str(v1.shape()) == "(2, 1)");
      const auto v = v1.to_vector<double>();
      REQUIRE(v.size() == 2);
      CHECK(v[0] == Approx(7.0).epsilon(1e-6));  // mean 3.5: (6.25+2.25+0.25+12.25)/3
      CHECK(v[1] == Approx(9.0).epsilon(1e-6));  // mean 4.5: (2.25*3+20.25)/3
      CHECK(s1.item<double>() == Approx(std::sqrt(50.0 / 7.0)).epsilon(1e-6));
      const nf::Array one = of({5}, t, {1});
      CHECK(nf::Array(nf::var(one)).item<double>() == 0);
      CHECK(std::isnan(nf::Array(nf::var(one, {}, 1)).item<double>()));
    }
  }
  SECTION("min and max propagate NaN") {
    for (DType t : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
      INFO(nftest::dname(t));
      const nf::Array x = of({1, std::nan(""), 3, 4, 5, 6}, t, {2, 3});
      const auto mx = nf::Array(nf::max(x, 1)).to_vector<double>();
      const auto mn = nf::Array(nf::min(x, 1)).to_vector<double>();
      REQUIRE(mx.size() == 2);
      REQUIRE(mn.size() == 2);
      CHECK(std::isnan(mx[0]));
      CHECK(std::isnan(mn[0]));
      CHECK(mx[1] == 6);
      CHECK(mn[1] == 4);
    }
  }
  SECTION("f16 and bf16 accumulate in f32") {
    const nf::Array h = nf::ones({5000}, nf::f16);
    CHECK(nf::Array(nf::sum(h)).item<double>() == 5000);
    const nf::Array b = nf::ones({1000}, nf::bf16);
    CHECK(nf::Array(nf::sum(b)).item<double>() == 1000);
    const nf::Array big = nf::full({4}, 60000, nf::f16);
    CHECK(nf::Array(nf::mean(big)).item<double>() == 60000);
  }
  SECTION("integer sums do not wrap at the input's width") {
    const nf::Array x = of({2147483647, 2147483647, 2}, nf::i32, {3});
    const nf::Array s = nf::sum(x);
    CHECK(nftest::dname(s.dtype()) == "i64");
    CHECK(s.item<std::int64_t>() == 4294967296LL);
    const nf::Array u = nf::full({300}, 255, nf::u8);
    CHECK(nf::Array(nf::sum(u)).item<std::int64_t>() == 76500);
  }
  SECTION("argmin and argmax without an axis index the flattened array") {
    const nf::Array x = of({3, 1, 4, 1, 5, 9, 2, 6, 9, 0, 5, 9}, nf::f32, {3, 4});
    const nf::Array lo = nf::argmin(x), hi = nf::argmax(x);
    CHECK(lo.size() == 1);
    CHECK(lo.item<std::int64_t>() == 9);
    CHECK(hi.item<std::int64_t>() == 5);
    CHECK(nf::Array(nf::argmax(x.T(), 0)).to_vector<std::int64_t>() ==
          std::vector<std::int64_t>{2, 1, 0});
  }
  SECTION("an axis out of range throws ShapeError") {
    const nf::Array x = nf::zeros({2, 3});
    CHECK_THROWS_AS(nf::sum(x, 2), nf::ShapeError);
    CHECK_THROWS_AS(nf::mean(x, -3), nf::ShapeError);
    CHECK_THROWS_AS(nf::argmax(x, 2), nf::ShapeError);
    CHECK_THROWS_AS(nf::sum(nf::zeros({}), 0), nf::ShapeError);
  }
  SECTION("reductions compose with the kept axes") {
    const nf::Array x = of({1, 2, 3, 4, 5, 6}, nf::f32, {2, 3});
    const nf::Array c = x - nf::mean(x, 1);
    CHECK(c.to_vector<double>() == std::vector<double>{-1, 0, 1, -1, 0, 1});
    CHECK(nftest::shape_str(nf::Array(nf::sum(x, 1)).squeeze().shape()) == "(2,)");
  }
}

TEST_CASE("the CPU backend accumulates in the types the kernels do", "[cpu-backend][reduce]") {
  // 2^24 and seven ones: in f32, 2^24 + 1 rounds back to 2^24 (ties to
  // even), so an f32 sum loses at least one of the ones however it is
  // ordered, and one in double loses none. The CPU backend accumulates f32
  // in f32 as the kernels do, and in double only when told to compute f32
  // work in f64. What is left after taking 2^24 away is exact in f32.
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  std::vector<float> row(8, 1.0f);
  row[0] = 16777216.0f;
  const nf::Array x = nf::array(row, {1, 8});
  const auto ones_kept = [&] { return nf::Array(nf::sum(x, 1) - 16777216.0f).item<float>(); };
  CHECK(ones_kept() < 7.0f);
  nf::set_cpu_compute_dtype(nf::f64);
  const float wide = ones_kept();
  nf::set_cpu_compute_dtype(nf::f32);
  CHECK(wide == 7.0f);
}
