#include "generate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>

namespace nf::fuzz {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Magnitudes a result of dtype t may reach without overflow or a loss of
// accuracy the tolerances do not allow for. u8 wraps (as numpy's does) on
// both backends alike.
double magnitude_limit(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 1e3;
    case DType::f32:
      return 1e5;
    case DType::f64:
      return 1e8;
    case DType::i32:
      return 1e6;
    case DType::i64:
      return 1e9;
    default:
      return kInf;
  }
}

double clamp_bound(double b, DType t) {
  if (t == bool_) return 1;
  if (t == u8) return std::min(b, 255.0);
  return b;
}

Term make(Term::Kind kind) {
  Term t;
  t.kind = kind;
  return t;
}

// An integer C++ scalar.
Term constant(double v) {
  Term t = make(Term::Kind::scalar);
  t.value = v;
  t.scalar_type = i64;
  return t;
}

class Generator {
 public:
  Generator(std::uint64_t seed, std::uint64_t index, const GenerateOptions& o)
      : rng_(mix(seed ^ mix(index ^ 0x5bd1e995u))), options_(o) {}

  Statement run() {
    static const DType dtypes[] = {f16, bf16, f32, f64, i32, i64, u8, bool_};
    main_ = dtypes[uniform(0, 7)];
    max_depth_ = uniform(1, 4);
    const int kind = uniform(0, 99);
    if (options_.products && kind < 15) {
      product();
    } else if (kind < 50) {
      s_.kind = Statement::Kind::assign;
      s_.roots.push_back(gen(domain_shape(), 0));
    } else if (kind < 65) {
      several();
    } else if (kind < 82) {
      update();
    } else {
      write();
    }
    for (int r : s_.roots) s_.depth = std::max(s_.depth, depth_[std::size_t(r)]);
    return std::move(s_);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[std::size_t(uniform(0, int(v.size()) - 1))];
  }

  std::int64_t extent() {
    static const std::vector<std::int64_t> sizes = {1, 1,  2,  3,  3,  4,  5,  5,   7, 8,
                                                    9, 13, 16, 17, 31, 33, 64, 100, 0};
    return pick(sizes);
  }

  Shape domain_shape() {
    if (chance(0.125)) return large_shape();
    const int rank = uniform(0, 4);
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(extent());
    // A few thousand elements at most, so that f64 references stay fast.
    while (numel(s) > 3000) {
      auto big = std::max_element(s.begin(), s.end());
      *big = (*big + 1) / 3;
    }
    return s;
  }

  // One case in eight: up to 16,384 elements, the last dim 32 or more and
  // the others 8 or more, so that the walks that need such dims run too:
  // tiles of a permuted view take 8 along its dim by 32 along the last, and
  // 2-byte ones 512 elements after their dim.
  Shape large_shape() {
    static const std::vector<std::int64_t> sizes = {8, 9, 12, 17, 31, 33, 40, 64, 100};
    static const std::vector<std::int64_t> lasts = {33, 40, 64, 76, 100};
    const int rank = uniform(2, 4);
    Shape s;
    for (int d = 0; d + 1 < rank; ++d) s.push_back(pick(sizes));
    s.push_back(pick(lasts));
    while (numel(s) > 16384) {  // halve the other dims first, down to 8, then the last
      auto big = std::max_element(s.begin(), s.end() - 1);
      if (*big > 8) {
        *big = std::max<std::int64_t>(8, *big / 2);
      } else {
        s.back() = std::max<std::int64_t>(32, s.back() / 2);
      }
    }
    return s;
  }

  DType leaf_dtype() {
    static const std::vector<DType> dtypes = {f16, bf16, f32, f64, i32, i64, u8, bool_};
    return chance(0.8) ? main_ : pick(dtypes);
  }

  // ---- values ----------------------------------------------------------------

  double floating_value(Domain d, bool quantised) {
    auto q = [&](int lo, int hi, double unit) {
      if (!quantised) return std::uniform_real_distribution<double>(lo * unit, hi * unit)(rng_);
      return uniform(lo, hi) * unit;
    };
    switch (d) {
      case Domain::positive:
        return q(2, 24, 0.125);
      case Domain::unit:
        return q(-7, 7, 0.125);
      case Domain::small:
        return q(-16, 16, 0.125);
      case Domain::nonzero:
        return (chance(0.5) ? -1 : 1) * q(4, 24, 0.125);
      case Domain::base:
        return q(4, 16, 0.125);
      case Domain::exponent:
        return uniform(-8, 8) * 0.25;
      case Domain::near_one:
        return uniform(12, 20) / 16.0;
      case Domain::low:
        return q(-16, -4, 0.125);
      case Domain::high:
        return q(4, 16, 0.125);
      case Domain::special: {
        const int r = uniform(0, 15);
        if (r == 0) return kNaN;
        if (r == 1) return kInf;
        if (r == 2) return -kInf;
        return q(-24, 24, 0.125);
      }
      case Domain::any:
        break;
    }
    return q(-24, 24, 0.125);
  }

  double integer_value(Domain d, DType t) {
    const bool u = t == u8;
    switch (d) {
      case Domain::positive:
      case Domain::nonzero:
        return u ? uniform(1, 5) : (d == Domain::nonzero && chance(0.5) ? -1 : 1) * uniform(1, 5);
      case Domain::unit:
        return u ? uniform(0, 1) : uniform(-1, 1);
      case Domain::small:
        return u ? uniform(0, 2) : uniform(-2, 2);
      case Domain::base:
        return u ? uniform(0, 3) : uniform(-3, 3);
      case Domain::exponent:
        return uniform(0, 3);
      case Domain::near_one:
        return u || chance(0.5) ? 1 : -1;
      case Domain::low:
        return u ? uniform(0, 2) : uniform(-3, -1);
      case Domain::high:
        return u ? uniform(3, 6) : uniform(1, 3);
      default:
        return u ? uniform(0, 9) : uniform(-5, 5);
    }
  }

  double bool_value(Domain d) {
    switch (d) {
      case Domain::positive:
      case Domain::nonzero:
      case Domain::base:
      case Domain::near_one:
      case Domain::high:
        return 1;
      default:
        return uniform(0, 1);
    }
  }

  std::vector<double> values(DType t, Domain d, std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    const bool quantised = !(t == f32 || t == f64) || chance(0.6);
    for (double& x : v) {
      if (is_floating(t)) {
        x = floating_value(d, quantised);
        if (t == f32) x = double(float(x));
      } else if (t == bool_) {
        x = bool_value(d);
      } else {
        x = integer_value(d, t);
      }
    }
    // Never all zeros.
    if (!v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; })) v[0] = 1;
    return v;
  }

  static double domain_bound(Domain d, DType t) {
    if (t == bool_) return 1;
    const bool integral = !is_floating(t);
    switch (d) {
      case Domain::unit:
      case Domain::near_one:
        return 1.25;
      case Domain::small:
      case Domain::base:
      case Domain::exponent:
      case Domain::low:
      case Domain::high:
        return 3;
      default:
        return integral ? (t == u8 ? 9 : 5) : 3;
    }
  }

  // ---- terms -------------------------------------------------------------------

  int input(DType t, const Shape& shape, Domain d) {
    s_.inputs.push_back({t, shape, d, values(t, d, numel(shape))});
    placeholders_.push_back(nf::empty(shape, t));
    return int(s_.inputs.size()) - 1;
  }

  // Adds term t when numfuse accepts it (its dtypes, its shapes) and its
  // result stays within what its dtype holds; else -1.
  int add(Term t, double bound) {
    int depth = 0;
    for (int a : t.args) depth = std::max(depth, depth_[std::size_t(a)]);
    if (t.kind != Term::Kind::leaf && t.kind != Term::Kind::scalar) ++depth;
    s_.terms.push_back(std::move(t));
    const int i = int(s_.terms.size()) - 1;
    try {
      const Expr e = build_term(s_, placeholders_, i, memo_);
      bound = clamp_bound(bound, e.dtype());
      if (s_.terms.back().kind != Term::Kind::scalar && bound > magnitude_limit(e.dtype())) {
        throw std::range_error("too large");
      }
    } catch (const std::exception&) {
      s_.terms.pop_back();
      memo_.resize(s_.terms.size());
      return -1;
    }
    bound_.push_back(bound);
    depth_.push_back(depth);
    return i;
  }

  const Expr& expr(int term) const { return *memo_[std::size_t(term)]; }

  // A view reading an array so that the view has `shape`: sliced with
  // steps, permuted or transposed, or the array itself.
  int leaf(const Shape& shape, DType t, Domain d, View view = {}, bool random_view = true) {
    const int rank = int(shape.size());
    Shape base = shape;
    if (random_view && rank > 0 && chance(0.4)) {
      std::vector<int> perm(static_cast<std::size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      if (rank > 1 && chance(0.6)) {
        if (chance(0.5)) {
          std::reverse(perm.begin(), perm.end());
          view.T = true;
        } else {
          std::shuffle(perm.begin(), perm.end(), rng_);
        }
        view.perm = perm;
      }
      // The view's shape is the slices' shape permuted: slice axis perm[k]
      // to shape[k].
      Shape sliced(static_cast<std::size_t>(rank));
      for (int k = 0; k < rank; ++k)
        sliced[std::size_t(perm[std::size_t(k)])] = shape[std::size_t(k)];
      base = sliced;
      if (chance(0.6)) {
        for (int a = 0; a < rank; ++a) {
          const std::int64_t n = sliced[std::size_t(a)];
          const std::int64_t step = uniform(1, 3), start = uniform(0, 2);
          const std::int64_t stop = n == 0 ? start : start + (n - 1) * step + 1;
          view.slices.push_back({start, stop, step});
          base[std::size_t(a)] = stop + uniform(0, 1);
        }
      }
    }
    Term term = make(Term::Kind::leaf);
    term.input = input(t, base, d);
    term.view = view;
    return add(term, domain_bound(d, t));
  }

  // A shape that broadcasts to `shape`: fewer axes, or axes of 1.
  Shape broadcastable(const Shape& shape) {
    Shape s = shape;
    if (!s.empty() && chance(0.2)) s.erase(s.begin(), s.begin() + uniform(1, int(s.size())));
    for (auto& d : s)
      if (chance(0.2)) d = 1;
    return s;
  }

  int scalar(Domain d, DType like) {
    Term t = make(Term::Kind::scalar);
    const bool integral = !is_floating(like);
    t.value = integral ? integer_value(d, like == bool_ ? i64 : like) : floating_value(d, true);
    if (d == Domain::special) t.value = floating_value(Domain::any, true);
    t.scalar_type = integral || (t.value == std::floor(t.value) && chance(0.5)) ? i64 : f64;
    if (t.scalar_type == i64) t.value = std::round(t.value);
    if (like == bool_ && chance(0.3)) {
      t.scalar_type = bool_;
      t.value = 1;
    }
    return add(t, std::fabs(t.value));
  }

  // An operand for op's operand i, of a shape broadcasting to `shape`.
  int operand(std::string_view op, int i, const Shape& shape, int depth) {
    const OperandRule rule = operand_rule(op, i);
    if (rule.bound > 0 && depth < max_depth_ && chance(0.7)) {
      const int sub = gen(shape, depth);
      if (sub >= 0 && bound_[std::size_t(sub)] <= rule.bound) return sub;
    }
    if (i > 0 && chance(0.2)) {
      const int sc = scalar(rule.domain, main_);
      if (sc >= 0) return sc;
    }
    return leaf(broadcastable(shape), leaf_dtype(), rule.domain);
  }

  int elementwise(const Shape& shape, int depth) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      const ElementwiseOp& op = pick(elementwise_ops());
      Term t = make(Term::Kind::elementwise);
      t.op = std::string(op.name);
      std::vector<double> bounds;
      for (int i = 0; i < op.arity; ++i) {
        const int a = operand(op.name, i, shape, depth + 1);
        if (a < 0) break;
        t.args.push_back(a);
        bounds.push_back(bound_[std::size_t(a)]);
      }
      if (int(t.args.size()) != op.arity) continue;
      const int r = add(t, result_bound(op.name, bounds));
      if (r >= 0) return r;
    }
    return -1;
  }

  std::vector<int> reduced_axes(int rank, bool single) {
    std::vector<int> axes;
    if (single) {
      axes.push_back(uniform(0, rank - 1));
    } else {
      for (int a = 0; a < rank; ++a)
        if (chance(0.5)) axes.push_back(a);
      if (axes.empty()) axes.push_back(uniform(0, rank - 1));
    }
    if (chance(0.2))
      for (int& a : axes) a -= rank;
    return axes;
  }

  int reduction(const Shape& shape, int depth) {
    for (int attempt = 0; attempt < 6; ++attempt) {
      const ReductionOp& op = pick(reduction_ops());
      const int rank = int(shape.size());
      Term t = make(Term::Kind::reduction);
      t.op = std::string(op.name);
      t.all_axes = rank == 0 || chance(0.25);
      if (!t.all_axes) t.axes = reduced_axes(rank, op.single_axis);
      // The operand's reduced axes may be longer than the result's 1.
      Shape in = shape;
      std::int64_t count = 1;
      for (int a = 0; a < rank; ++a) {
        const bool reduced = t.all_axes || std::count_if(t.axes.begin(), t.axes.end(), [&](int x) {
                                             return (x + rank) % rank == a;
                                           }) > 0;
        if (reduced && (in[std::size_t(a)] == 1 || chance(0.3))) in[std::size_t(a)] = extent();
        if (reduced) count *= in[std::size_t(a)];
      }
      const std::string_view n = op.name;
      const bool extremum = n == "min" || n == "max" || n == "argmin" || n == "argmax";
      if (extremum && count == 0) continue;
      if (n == "prod" && count > 64) continue;
      if (op.takes_ddof) t.ddof = uniform(0, 1);
      // Operands whose ties or jumps would differ on two backends are read
      // from memory; the others may be computed.
      const bool leaves_only = n == "argmin" || n == "argmax" || n == "any" || n == "all";
      int arg = -1;
      if (n == "prod") {
        arg = leaf(in, leaf_dtype(), Domain::near_one);
      } else if (!leaves_only && depth < max_depth_ && chance(0.6)) {
        arg = gen(in, depth + 1);
        if (arg >= 0 && bound_[std::size_t(arg)] > 8) arg = -1;
      }
      if (arg < 0) arg = leaf(in, leaf_dtype(), Domain::any);
      if (arg < 0) continue;
      t.args = {arg};
      const double b = bound_[std::size_t(arg)];
      double bound = b;
      if (n == "sum") bound = b * double(std::max<std::int64_t>(count, 1));
      if (n == "var") bound = b * b * 2;
      if (n == "norm") bound = b * std::sqrt(double(std::max<std::int64_t>(count, 1)));
      if (n == "logsumexp") bound = b + std::log(double(count) + 1);
      if (n == "argmin" || n == "argmax") bound = double(std::max<std::int64_t>(numel(in), 1));
      if (n == "prod") bound = 1e6;
      if (n == "any" || n == "all") bound = 1;
      const int r = add(t, bound);
      if (r >= 0) return r;
    }
    return -1;
  }

  int term(Term::Kind kind, std::string op, std::vector<int> args, double bound,
           std::vector<int> axes = {}) {
    Term t = make(kind);
    t.op = std::move(op);
    t.args = std::move(args);
    for (int a : t.args)
      if (a < 0) return -1;
    if (!axes.empty()) {
      t.all_axes = false;
      t.axes = std::move(axes);
    }
    return add(t, bound);
  }

  // A reduction broadcast back over what it reduced: x - mean(x, axes),
  // softmax, a normalisation, x - logsumexp(x, axes).
  int reduce_and_broadcast(const Shape& shape, int depth) {
    if (shape.empty()) return -1;
    int x = depth < max_depth_ && chance(0.5) ? gen(shape, depth + 1) : -1;
    if (x < 0 || bound_[std::size_t(x)] > 8 || !is_floating(expr(x).dtype())) {
      x = leaf(shape, is_floating(main_) ? main_ : f32, Domain::any);
    }
    if (x < 0) return -1;
    const std::vector<int> axes = reduced_axes(int(shape.size()), false);
    const double b = bound_[std::size_t(x)];
    using K = Term::Kind;
    switch (uniform(0, 3)) {
      case 0:
        return term(K::elementwise, "subtract", {x, term(K::reduction, "mean", {x}, b, axes)},
                    2 * b);
      case 1: {
        const int e = term(
            K::elementwise, "exp",
            {term(K::elementwise, "subtract", {x, term(K::reduction, "max", {x}, b, axes)}, 2 * b)},
            1);
        return term(K::elementwise, "divide", {e, term(K::reduction, "sum", {e}, 3000, axes)}, 1);
      }
      case 2: {
        const int centred =
            term(K::elementwise, "subtract", {x, term(K::reduction, "mean", {x}, b, axes)}, 2 * b);
        const int v = term(K::reduction, "var", {x}, b * b, axes);
        const int one = add(constant(1.0), 1);
        const int scale =
            term(K::elementwise, "rsqrt", {term(K::elementwise, "add", {v, one}, b * b + 1)}, 1);
        return term(K::elementwise, "multiply", {centred, scale}, 2 * b);
      }
      default:
        return term(K::elementwise, "subtract",
                    {x, term(K::reduction, "logsumexp", {x}, b + 9, axes)}, 2 * b + 9);
    }
  }

  int cast(const Shape& shape, int depth) {
    const int x = gen(shape, depth + 1);
    if (x < 0) return -1;
    const DType from = expr(x).dtype();
    static const std::vector<DType> floats = {f16, bf16, f32, f64};
    static const std::vector<DType> ints = {i32, i64, u8};
    // Floating values to integers would truncate values computed
    // differently on the two backends.
    const DType to = is_floating(from) || chance(0.5) ? pick(floats) : pick(ints);
    Term t = make(Term::Kind::cast);
    t.to = to;
    t.args = {x};
    return add(t, bound_[std::size_t(x)]);
  }

  // An expression of any value whose shape broadcasts to `shape`.
  // numpy's take of an expression along one axis of `shape`: indices of the
  // axis's length into an axis of another, in any mode (out of range but
  // for raise), from an i64, i32 or u8 array.
  int take(const Shape& shape, int depth) {
    if (shape.empty()) return -1;
    const int axis = uniform(0, int(shape.size()) - 1);
    Shape from = shape;
    const std::int64_t n = std::max<std::int64_t>(extent(), 1);
    from[std::size_t(axis)] = n;
    static const std::vector<DType> index_dtypes = {i64, i32, u8};
    const DType t = pick(index_dtypes);
    const TakeMode mode = TakeMode(uniform(0, 2));
    const int reach = int(mode == TakeMode::raise ? n : 3 * n);
    std::vector<double> values;
    for (std::int64_t k = 0; k < shape[std::size_t(axis)]; ++k) {
      const int v = uniform(t == u8 ? 0 : -reach, std::min(reach - 1, 255));
      values.push_back(double(v));
    }
    // The indices are read back (raise), so their placeholder holds them.
    const Shape index_shape{shape[std::size_t(axis)]};
    s_.inputs.push_back({t, index_shape, Domain::any, values});
    placeholders_.push_back(nf::astype(nf::array(values, index_shape), t));
    Term index = make(Term::Kind::leaf);
    index.input = int(s_.inputs.size()) - 1;
    int x = gen(from, depth + 1);
    if (expr(x).shape() != from) x = leaf(from, leaf_dtype(), Domain::any);
    Term g = make(Term::Kind::take);
    g.args = {x, add(index, double(reach))};
    g.axis = axis;
    g.mode = mode;
    if (g.args[1] < 0) return -1;
    return add(g, bound_[std::size_t(x)]);
  }

  int gen(const Shape& shape, int depth) {
    int r = -1;
    if (depth < max_depth_ && !(depth > 0 && chance(0.2))) {
      const int kind = uniform(0, 99);
      if (kind < 65) {
        r = elementwise(shape, depth);
      } else if (kind < 80) {
        r = reduction(shape, depth);
      } else if (kind < 90) {
        r = reduce_and_broadcast(shape, depth);
      } else if (kind < 95) {
        r = take(shape, depth);
      } else {
        r = cast(shape, depth);
      }
    }
    if (r < 0) r = leaf(depth == 0 ? shape : broadcastable(shape), leaf_dtype(), Domain::any);
    return r;
  }

  // ---- statements -----------------------------------------------------------------

  // nf::eval of several roots sharing subexpressions.
  void several() {
    s_.kind = Statement::Kind::eval;
    const int first = gen(domain_shape(), 0);
    s_.roots.push_back(first);
    int shared = uniform(0, first);
    while (s_.terms[std::size_t(shared)].kind == Term::Kind::scalar) ++shared;
    const Shape shape = expr(shared).shape();
    using K = Term::Kind;
    int second = -1;
    switch (uniform(0, 2)) {
      case 0:
        second = reduction(shape, max_depth_);
        break;
      case 1:
        second = term(K::elementwise, "multiply", {shared, add(constant(2), 2)},
                      2 * bound_[std::size_t(shared)]);
        break;
      default:
        second = term(K::elementwise, "add",
                      {shared, leaf(broadcastable(shape), leaf_dtype(), Domain::any)},
                      bound_[std::size_t(shared)] + 9);
    }
    if (second >= 0) s_.roots.push_back(second);
    if (chance(0.3) && shared != first) s_.roots.push_back(shared);
  }

  // x op= e, where e reads x: x += x.T(), x -= mean(x, 0), x *= f(x, y).
  void update() {
    s_.kind = Statement::Kind::update;
    Shape shape = domain_shape();
    const bool square = chance(0.3);
    if (square) {
      const std::int64_t n = extent();
      shape = {n, n};
    }
    const DType t = main_;
    const int x = leaf(shape, t, Domain::any, {}, false);
    s_.target = s_.terms[std::size_t(x)].input;
    const Input& in = s_.inputs[std::size_t(s_.target)];
    static const char ops[] = {'+', '-', '*', '/'};
    s_.op = ops[uniform(0, 3)];
    if (s_.op == '/' && !is_floating(t)) s_.op = '+';
    int e = -1;
    using K = Term::Kind;
    if (square && chance(0.7)) {
      Term tr = make(K::leaf);
      tr.input = s_.target;
      tr.view.T = true;
      tr.view.perm = {1, 0};
      e = add(tr, domain_bound(in.domain, t));
      if (chance(0.5)) e = term(K::elementwise, "multiply", {e, gen(shape, 1)}, 1e3);
    } else if (!shape.empty() && chance(0.4)) {
      e = term(K::reduction, "mean", {x}, 5, reduced_axes(int(shape.size()), false));
    } else {
      e = gen(shape, 0);
      if (e >= 0 && chance(0.5)) e = term(K::elementwise, "maximum", {e, x}, 1e3);
    }
    if (s_.op == '/' && e >= 0) {
      // A divisor away from zero.
      e = term(K::elementwise, "add", {term(K::elementwise, "abs", {e}, 1e3), add(constant(1), 1)},
               1e3);
    }
    if (e < 0 || bound_[std::size_t(e)] > 1e3 ||
        !can_cast_same_kind(promote_types(expr(e).dtype(), t), t) ||
        expr(e).ndim() > int(shape.size()) || broadcast_shapes(expr(e).shape(), shape) != shape) {
      e = leaf(broadcastable(shape), t, Domain::nonzero);
    }
    s_.roots = {e};
  }

  // An overlapping slice assignment: x[k:] = f(x[:-k]) along one axis.
  void write() {
    s_.kind = Statement::Kind::write;
    const int rank = uniform(1, 3);
    Shape base;
    for (int d = 0; d < rank; ++d) base.push_back(std::max<std::int64_t>(extent(), 2));
    while (numel(base) > 3000) {
      auto big = std::max_element(base.begin(), base.end());
      *big = std::max<std::int64_t>((*big + 1) / 3, 2);
    }
    const DType t = main_;
    s_.target = input(t, base, Domain::any);
    const int axis = uniform(0, rank - 1);
    const std::int64_t n = base[std::size_t(axis)];
    const std::int64_t k = uniform(1, int(n) - 1), step = chance(0.3) ? 2 : 1;
    View target, read;
    for (int a = 0; a < rank; ++a) {
      const std::int64_t m = base[std::size_t(a)];
      target.slices.push_back(a == axis ? SliceSpec{k, n, step} : SliceSpec{0, m, 1});
      read.slices.push_back(a == axis ? SliceSpec{0, n - k, step} : SliceSpec{0, m, 1});
    }
    if (chance(0.5)) std::swap(target, read);
    s_.target_view = target;
    Term r = make(Term::Kind::leaf);
    r.input = s_.target;
    r.view = read;
    const int x = add(r, 5);
    const Shape shape = expr(x).shape();
    using K = Term::Kind;
    int e = -1;
    switch (uniform(0, 2)) {
      case 0:
        e = term(K::elementwise, "multiply", {x, add(constant(2), 2)}, 10);
        break;
      case 1:
        e = term(K::elementwise, "add", {x, gen(shape, 1)}, 1e3);
        break;
      default:
        e = term(K::elementwise, "subtract", {x, term(K::reduction, "max", {x}, 5, {axis})}, 10);
    }
    if (e < 0 || bound_[std::size_t(e)] > 1e3 || !can_cast_same_kind(expr(e).dtype(), t)) {
      e = x;
    }
    s_.roots = {e};
  }

  // dot / matmul with an epilogue: + bias, relu or gelu_tanh, or other
  // consumers; batched with broadcast batch axes.
  void product() {
    s_.kind = Statement::Kind::assign;
    s_.products = true;
    static const std::vector<DType> dtypes = {f32, f64, f16, bf16};
    const DType t = pick(dtypes);
    static const std::vector<std::int64_t> sizes = {1, 2, 3, 5, 7, 16, 17, 33, 64};
    const std::int64_t m = pick(sizes), k = pick(sizes), n = pick(sizes);
    const bool batched = chance(0.3);
    const std::int64_t b = uniform(2, 3);
    Shape as = {m, k}, bs = {k, n};
    if (batched) {
      as.insert(as.begin(), chance(0.3) ? 1 : b);
      bs.insert(bs.begin(), b);
      if (chance(0.3)) bs.erase(bs.begin());
    }
    const int a = leaf(as, t, Domain::any), bb = leaf(bs, t, Domain::any);
    using K = Term::Kind;
    int p = term(K::product, batched ? "matmul" : (chance(0.5) ? "dot" : "matmul"), {a, bb},
                 9.0 * double(k));
    if (p < 0) return fallback();
    switch (uniform(0, 4)) {
      case 0:
        break;
      case 1:
      case 2: {
        const int bias = leaf({n}, t, Domain::any);
        p = term(K::elementwise, "add", {p, bias}, 9.0 * double(k) + 3);
        static const std::vector<std::string> acts = {"", "relu", "gelu_tanh"};
        const std::string act = pick(acts);
        if (!act.empty() && p >= 0) p = term(K::elementwise, act, {p}, 9.0 * double(k) + 4);
        break;
      }
      case 3:
        p = term(K::elementwise, "multiply",
                 {p, leaf(broadcastable(expr(p).shape()), t, Domain::any)}, 27.0 * double(k));
        break;
      default:
        p = term(K::reduction, "sum", {p}, 9.0 * double(k * n), {-1});
    }
    if (p < 0) return fallback();
    s_.roots = {p};
  }

  void fallback() {
    s_.kind = Statement::Kind::assign;
    s_.products = false;
    s_.roots = {gen(domain_shape(), 0)};
  }

  std::mt19937_64 rng_;
  GenerateOptions options_;
  Statement s_;
  DType main_ = f32;
  int max_depth_ = 3;
  std::vector<Array> placeholders_;
  std::vector<std::optional<Expr>> memo_;
  std::vector<double> bound_;
  std::vector<int> depth_;
};

}  // namespace

Statement generate(std::uint64_t seed, std::uint64_t index, const GenerateOptions& options) {
  return Generator(seed, index, options).run();
}

}  // namespace nf::fuzz
