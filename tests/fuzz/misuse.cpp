#include "misuse.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace nf::fuzz {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Arrays a case may really create; anything between this and kSurelyTooBig
// is kept out of the cases, so that none allocates gigabytes that a machine
// might happen to have.
constexpr double kSmallBytes = 1 << 20;
constexpr double kSurelyTooBig = 0x1p48;

struct Rng {
  std::mt19937_64 g;
  std::int64_t below(std::int64_t n) { return std::int64_t(g() % std::uint64_t(n)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }
  template <class T>
  T pick(const std::vector<T>& v) {
    return v[std::size_t(below(std::int64_t(v.size())))];
  }
};

const std::vector<DType> kDTypes = {f16, bf16, f32, f64, i32, i64, u8, bool_};

std::string cpp(DType t) {
  return "nf::" + std::string(t == bool_ ? "bool_" : name(t));
}

std::string cpp(const Shape& s) {
  std::string out = "{";
  for (std::size_t i = 0; i < s.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(s[i]);
    if (s[i] > (1ll << 31) || s[i] < -(1ll << 31)) out += "LL";
  }
  return out + "}";
}

std::string cpp(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

bool is_integer(DType t) {
  return t == i32 || t == i64 || t == u8;
}

double lowest(DType t) {
  return t == u8 ? 0 : t == i32 ? -0x1p31 : -0x1p63;
}
double highest(DType t) {  // exclusive
  return t == u8 ? 256 : t == i32 ? 0x1p31 : 0x1p63;
}

// What numpy makes of a shape, worked out here from its dimensions.
enum class Fate { ok, shape_error, too_big, either };

Fate fate_of(const Shape& s, DType t) {
  bool zero = false;
  for (std::int64_t d : s) {
    if (d < 0) return Fate::shape_error;
    zero = zero || d == 0;
  }
  __int128 n = 1;
  bool overflow = false;
  for (std::int64_t d : s) {
    if (d == 0) continue;
    n *= d;
    if (n > kMax) {
      overflow = true;
      break;
    }
  }
  // numpy checks the byte size of the non-zero dimensions even when the
  // array is empty; an empty array may also just be made.
  if (zero) return overflow || double(n) * itemsize(t) >= kSurelyTooBig ? Fate::either : Fate::ok;
  if (overflow) return Fate::shape_error;
  return double(n) * itemsize(t) > kSmallBytes ? Fate::too_big : Fate::ok;
}

std::int64_t dimension(Rng& r) {
  if (r.chance(0.08)) return -r.below(3) - 1;
  if (r.chance(0.12))
    return r.pick<std::int64_t>({1ll << 31, 1ll << 32, 1ll << 48, 1ll << 62, kMax});
  return r.pick<std::int64_t>({0, 1, 1, 2, 3, 5, 7});
}

// A shape of up to `max_rank` dimensions whose bytes are small or surely too
// many for any machine.
Shape hostile_shape(Rng& r, DType t, int max_rank) {
  Shape s(std::size_t(r.below(max_rank + 1)));
  for (auto& d : s) d = dimension(r);
  for (;;) {
    double bytes = itemsize(t);
    bool sure = false;
    for (std::int64_t d : s) {
      bytes *= double(d);
      sure = sure || d <= 0;
    }
    if (sure || bytes <= kSmallBytes || bytes >= kSurelyTooBig) return s;
    *std::max_element(s.begin(), s.end()) = 1;
  }
}

Shape small_shape(Rng& r, int max_rank) {
  Shape s(std::size_t(r.below(max_rank + 1)));
  for (auto& d : s) d = r.pick<std::int64_t>({1, 1, 2, 3, 4});
  return s;
}

Array random_array(const Shape& s, DType t) {
  return Array(astype(floor(rand(s, f64) * 10.0) - 3.0, t));
}

std::vector<double> values(const Array& a) {
  return a.to_vector<double>();
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  }
  return true;
}

// The kinds of user error a call may throw.
enum Allowed : unsigned {
  none = 0,
  shape = 1,
  dtype = 2,
  value = 4,
  memory = 8,
  any = shape | dtype | value | memory,
};

const char* kind_of(const nf::Error& e) {
  if (dynamic_cast<const nf::ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const nf::DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const nf::ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const nf::OutOfMemory*>(&e)) return "OutOfMemory";
  if (dynamic_cast<const nf::InternalError*>(&e)) return "InternalError";
  return "Error";
}

unsigned bit_of(const nf::Error& e) {
  const std::string k = kind_of(e);
  if (k == "ShapeError") return shape;
  if (k == "DTypeError") return dtype;
  if (k == "ValueError") return value;
  if (k == "OutOfMemory") return memory;
  return none;
}

// Runs `call`; it may throw the errors in `allowed` and must not throw others
// or return when `must_throw`. `check` runs when it returned; `unchanged`
// after it threw.
Outcome attempt(const std::function<void()>& call, unsigned allowed, bool must_throw,
                const std::function<std::string()>& check = {},
                const std::function<std::string()>& unchanged = {}) {
  Outcome o;
  try {
    call();
  } catch (const nf::Error& e) {
    if (!(bit_of(e) & allowed)) {
      o.ok = false;
      o.report = std::string("threw ") + kind_of(e) + ": " + e.what() + "\n";
    } else if (std::string(e.what()).empty()) {
      o.ok = false;
      o.report = std::string("threw ") + kind_of(e) + " without a message\n";
    } else if (unchanged) {
      o.report = unchanged();
      o.ok = o.report.empty();
    }
    return o;
  } catch (const std::exception& e) {
    o.ok = false;
    o.report = std::string("threw a std::exception that is not an nf::Error: ") + e.what() + "\n";
    return o;
  }
  if (must_throw) {
    o.ok = false;
    o.report = "returned where it should throw\n";
  } else if (check) {
    o.report = check();
    o.ok = o.report.empty();
  }
  return o;
}

unsigned allowed_for(Fate f) {
  switch (f) {
    case Fate::ok:
      return none;
    case Fate::shape_error:
      return shape;
    case Fate::too_big:
      return shape | memory;
    case Fate::either:
      return shape | memory | value;
  }
  return none;
}

Outcome create(Rng& r, std::ostream& code) {
  const DType t = r.pick(kDTypes);
  const Shape s = hostile_shape(r, t, 4);
  const int how = int(r.below(5));
  const char* names[] = {"zeros", "ones", "empty", "full", "rand"};
  code << "nf::Array a = nf::" << names[how] << "(" << cpp(s) << (how == 3 ? ", 2" : "");
  code << ", " << cpp(how == 4 ? f32 : t) << ");\n";
  const Fate f = fate_of(s, how == 4 ? f32 : t);
  Array a;
  auto call = [&] {
    switch (how) {
      case 0:
        a = zeros(s, t);
        break;
      case 1:
        a = ones(s, t);
        break;
      case 2:
        a = empty(s, t);
        break;
      case 3:
        a = full(s, 2, t);
        break;
      default:
        a = Array(rand(s, f32));
    }
  };
  auto check = [&]() -> std::string {
    if (a.shape() != s) return "made shape " + to_string(a.shape()) + "\n";
    if (how == 2 || how == 4) return "";
    const double want = how == 0 ? 0 : how == 1 ? 1 : t == bool_ ? 1 : 2;
    for (double v : values(a)) {
      if (v != want) return "an element is " + cpp(v) + ", not " + cpp(want) + "\n";
    }
    return "";
  };
  return attempt(call, allowed_for(f), f == Fate::shape_error || f == Fate::too_big, check);
}

// numpy 2: a scalar into an integer dtype must be a number inside its range.
Outcome fill(Rng& r, std::ostream& code) {
  const DType t = r.pick(kDTypes);
  const double v = r.pick<double>({300, 255, 256, -1, -129, 0x1p31, -0x1p31, 0x1p31 - 1, 0x1p40,
                                   0x1p63, -0x1p63, 1e300, 0.5, -2.5, kNaN, kInf, -kInf, 7});
  code << "nf::Array a = nf::full({3}, " << cpp(v) << ", " << cpp(t) << ");\n";
  unsigned allowed = none;
  bool must_throw = false;
  bool exact = !is_integer(t) && t != bool_;
  if (is_integer(t)) {
    const bool integral = std::isfinite(v) && v == std::trunc(v);
    if (!std::isfinite(v) || (integral && (v < lowest(t) || v >= highest(t)))) {
      allowed = value;
      must_throw = true;
    } else if (!integral) {
      allowed = value;  // truncation is C++'s; numpy 2 also accepts it
    }
    exact = integral && !must_throw;
  }
  Array a;
  auto check = [&]() -> std::string {
    if (!exact || t == f16 || t == bf16) return "";
    const double want = t == f32 ? double(float(v)) : v;
    for (double x : values(a)) {
      if (!(x == want || (std::isnan(x) && std::isnan(want)))) {
        return "an element is " + cpp(x) + ", not " + cpp(want) + "\n";
      }
    }
    return "";
  };
  return attempt([&] { a = full({3}, v, t); }, allowed, must_throw, check);
}

Outcome reshape(Rng& r, std::ostream& code) {
  const Shape from = small_shape(r, 4);
  const std::int64_t n = numel(from);
  Shape to(std::size_t(r.below(4) + 1));
  for (auto& d : to) {
    d = r.chance(0.25)  ? -1
        : r.chance(0.1) ? r.pick<std::int64_t>({-2, 1ll << 62, kMax})
        : r.chance(0.2) ? n
                        : r.below(5);
  }
  int unknown = 0;
  bool bad = false;
  __int128 known = 1;
  for (std::int64_t d : to) {
    if (d == -1) {
      ++unknown;
    } else if (d < 0) {
      bad = true;
    } else {
      known *= d;
      if (known > kMax) known = __int128(kMax) + 1;
    }
  }
  const bool ok = !bad && (unknown == 0   ? known == n
                           : unknown == 1 ? known != 0 && n % std::int64_t(known) == 0
                                          : false);
  code << "nf::Array a = nf::rand(" << cpp(from) << ", nf::f64);\nauto b = a.reshape(" << cpp(to)
       << ");\n";
  const Array a = random_array(from, f64);
  const std::vector<double> before = values(a);
  Array b;
  auto check = [&]() -> std::string {
    if (b.size() != n) return "reshaped to " + to_string(b.shape()) + "\n";
    return same(values(b), before) ? "" : "reshape changed the values\n";
  };
  auto unchanged = [&]() -> std::string { return same(values(a), before) ? "" : "a changed\n"; };
  return attempt([&] { b = a.reshape(to); }, ok ? none : shape | value, !ok, check, unchanged);
}

// Broadcast views are read-only, as numpy's.
Outcome broadcast(Rng& r, std::ostream& code) {
  const Shape from = small_shape(r, 3);
  Shape to(std::size_t(r.below(4) + 1));
  for (auto& d : to) d = r.chance(0.05) ? -1 : r.pick<std::int64_t>({1, 2, 3, 4});
  bool ok = to.size() >= from.size();
  for (std::size_t i = 0; ok && i < to.size(); ++i) {
    const std::int64_t t = to[to.size() - 1 - i];
    const std::int64_t f = i < from.size() ? from[from.size() - 1 - i] : 1;
    ok = t >= 0 && (f == t || f == 1);
  }
  const DType t = r.pick<DType>({f32, i32, f64, u8});
  const Array a = random_array(from, t);
  const std::vector<double> before = values(a);
  code << "nf::Array a = ... " << to_string(from) << " " << cpp(t) << ";\nauto v = a.broadcast_to("
       << cpp(to) << ");\n";
  Array v;
  Outcome o = attempt([&] { v = a.broadcast_to(to); }, ok ? none : shape, !ok);
  if (!o.ok || !ok) return o;
  code << "v += 1;\n";
  auto unchanged = [&]() -> std::string {
    return same(values(a), before) ? "" : "a changed although v += 1 threw\n";
  };
  return attempt([&] { v += 1; }, value, true, {}, unchanged);
}

Outcome reduce_axes(Rng& r, std::ostream& code) {
  const Shape s = small_shape(r, 4);
  std::vector<int> axes(std::size_t(r.below(3) + 1));
  for (int& x : axes) x = int(r.below(11)) - 5;
  const int nd = int(s.size());
  std::vector<bool> seen(std::size_t(std::max(nd, 1)));
  bool ok = true;
  for (int x : axes) {
    const int k = x < 0 ? x + nd : x;
    ok = ok && k >= 0 && k < nd && !seen[std::size_t(k)];
    if (ok) seen[std::size_t(k)] = true;
  }
  code << "nf::Array a = ... " << to_string(s) << ";\nnf::Array m = nf::sum(a, {";
  for (std::size_t i = 0; i < axes.size(); ++i) code << (i ? ", " : "") << axes[i];
  code << "});\n";
  const Array a = random_array(s, f32);
  Array m;
  auto check = [&]() -> std::string {
    Shape want = s;
    for (std::size_t k = 0; k < seen.size() && k < want.size(); ++k)
      if (seen[k]) want[k] = 1;
    return m.shape() == want ? "" : "sum has shape " + to_string(m.shape()) + "\n";
  };
  return attempt([&] { m = Array(sum(a, Axes(axes))); }, ok ? none : shape, !ok, check);
}

Outcome fuzz_index(Rng& r, std::ostream& code) {
  const Shape s = small_shape(r, 3);
  std::vector<Index> idx;
  bool ok = true;
  const std::size_t count = std::size_t(r.below(std::int64_t(s.size()) + 2));
  ok = count <= s.size();
  code << "nf::Array a = ... " << to_string(s) << ";\nauto v = a.index({";
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t d = i < s.size() ? s[i] : 1;
    if (r.chance(0.5)) {
      const std::int64_t k = r.below(9) - 4;
      ok = ok && k >= -d && k < d;
      idx.emplace_back(k);
      code << (i ? ", " : "") << k;
    } else {
      const std::int64_t step = r.pick<std::int64_t>({-2, -1, 0, 1, 2});
      const std::int64_t start = r.below(9) - 4;
      ok = ok && step != 0;
      idx.emplace_back(slice(start, none, step));
      code << (i ? ", " : "") << "nf::slice(" << start << ", nf::none, " << step << ")";
    }
  }
  code << "});\n";
  const Array a = random_array(s, f32);
  return attempt([&] { (void)a.index(idx).to_vector<float>(); }, ok ? none : shape | value, !ok);
}

Outcome binary(Rng& r, std::ostream& code) {
  const Shape x = small_shape(r, 3), y = small_shape(r, 3);
  bool ok = true;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    const std::int64_t a = x[x.size() - 1 - i], b = y[y.size() - 1 - i];
    ok = ok && (a == b || a == 1 || b == 1);
  }
  code << "auto c = nf::Array(x " << to_string(x) << ") + y " << to_string(y) << ";\n";
  const Array a = random_array(x, f32), b = random_array(y, i32);
  return attempt([&] { (void)Array(a + b).to_vector<float>(); }, ok ? none : shape, !ok);
}

// In place: the dtype must be same-kind castable; the target stays as it was
// when it is not.
Outcome update(Rng& r, std::ostream& code) {
  const DType t = r.pick(kDTypes), u = r.pick(kDTypes);
  const Shape s = small_shape(r, 2);
  const Array a = random_array(s, t), b = random_array(s, u);
  const std::vector<double> before = values(a);
  code << "a (" << cpp(t) << ") += b (" << cpp(u) << ");\n";
  Array target = a;
  auto unchanged = [&]() -> std::string {
    return same(values(a), before) ? "" : "a changed although += threw\n";
  };
  return attempt([&] { target += b; }, dtype, false, {}, unchanged);
}

// numpy 2 (NEP 50): an integer scalar outside the array's integer dtype
// raises; so does an integer to a negative integer power.
Outcome scalar(Rng& r, std::ostream& code) {
  const DType t = r.pick<DType>({u8, i32, i64});
  const std::int64_t v = r.pick<std::int64_t>(
      {5, 0, -1, 255, 256, 300, -129, 1ll << 31, -(1ll << 31) - 1, 1ll << 40, kMax});
  const bool power = r.chance(0.3);
  const Array a = random_array({4}, t);
  code << "nf::Array a = ... {4} " << cpp(t) << ";\nauto c = " << (power ? "nf::power(a, " : "a + ")
       << v << (power ? ")" : "") << ";\n";
  // Every int64 fits i64 (2^63 - 1 is not below highest(i64) as a double).
  const bool fits = t == i64 || (double(v) >= lowest(t) && double(v) < highest(t));
  const bool ok = fits && !(power && v < 0);
  auto call = [&] { (void)Array(power ? nf::power(a, v) : a + v).to_vector<double>(); };
  return attempt(call, ok ? none : value, !ok);
}

Outcome product(Rng& r, std::ostream& code) {
  const std::int64_t m = r.below(4) + 1, k = r.below(4) + 1, n = r.below(4) + 1;
  const std::int64_t k2 = r.chance(0.3) ? r.below(4) + 1 : k;
  code << "auto c = nf::matmul(a {" << m << ", " << k << "}, b {" << k2 << ", " << n << "});\n";
  const Array a = random_array({m, k}, f32), b = random_array({k2, n}, f32);
  return attempt([&] { (void)Array(matmul(a, b)).to_vector<float>(); }, k == k2 ? none : shape,
                 k != k2);
}

// numpy's take with hostile indices, dtypes and axes, assigned to the
// array it reads: in range it works (raise), out of range it is a
// ValueError; a bad axis a ShapeError, floating or bool indices a
// DTypeError; wrap and clip take anything from a non-empty axis. A call that
// throws leaves the array as it was.
Outcome take_indices(Rng& r, std::ostream& code) {
  const Shape s = small_shape(r, 3);
  const int rank = int(s.size());
  const int axis = int(r.below(rank + 3)) - 2;  // -2 .. rank
  const DType t = r.pick<DType>({i64, i32, u8, f32, bool_});
  const TakeMode mode =
      r.pick<TakeMode>({TakeMode::raise, TakeMode::raise, TakeMode::wrap, TakeMode::clip});
  std::vector<std::int64_t> idx(std::size_t(r.below(4)));
  for (auto& v : idx) v = r.below(11) - 5;
  if (t == u8 || t == bool_) {
    for (auto& v : idx) v = std::abs(v) % 2;
  }
  code << "nf::Array a = ... " << to_string(s) << ";\na = nf::take(a, " << name(t) << " {";
  for (std::size_t i = 0; i < idx.size(); ++i) code << (i ? ", " : "") << idx[i];
  code << "}, " << axis << ", mode " << int(mode) << ");\n";
  const bool axis_ok = rank > 0 && axis >= -rank && axis < rank;
  const std::int64_t n = axis_ok ? s[std::size_t(axis < 0 ? axis + rank : axis)] : 0;
  bool in_range = true;
  for (std::int64_t v : idx) in_range = in_range && v >= -n && v < n;
  const bool integer = t != f32 && t != bool_;
  const bool ok = axis_ok && integer && (mode == TakeMode::raise ? in_range : n > 0 || idx.empty());
  const unsigned allowed = !axis_ok ? shape : !integer ? dtype | shape : value;
  Array a = random_array(s, f32);
  const std::vector<double> before = values(a);
  const Array indices = astype(array(idx), t);
  auto unchanged = [&]() -> std::string {
    return same(values(a), before) ? "" : "a changed although take threw\n";
  };
  return attempt([&] { a = take(a, indices, axis, mode); }, ok ? none : allowed, !ok, {},
                 unchanged);
}

// An environment variable set to a value from a hostile list, in a child
// process (configuration is read once per process).
Outcome environment(Rng& r, std::ostream& code, const std::string& self) {
  const std::string var = r.pick<std::string>({"NF_FUSION", "NF_CACHE", "NF_DEVICE",
                                               "NF_REDUCE_LIMITS", "NF_TARGET_ARCH", "NF_CACHE_DIR",
                                               "NF_KERNEL_MANIFEST", "NF_LAUNCH_THREAD"});
  const std::string val = r.pick<std::string>({"",
                                               "on",
                                               "off",
                                               "banana",
                                               "0",
                                               "1",
                                               "cpu",
                                               "cuda:0",
                                               "cuda:7",
                                               "cuda:-1",
                                               "cuda:",
                                               "max_held=-3",
                                               "max_held=8,split_below=",
                                               "sm_90",
                                               "sm_",
                                               "/nonexistent/numfuse",
                                               "/dev/null",
                                               "maybe",
                                               "\x01\x7f",
                                               "99999999999999999999"});
  code << var << "='" << val << "' numfuse_fuzz --environment-probe\n";
  Outcome o;
  const pid_t pid = fork();
  if (pid == 0) {
    setenv(var.c_str(), val.c_str(), 1);
    if (var != "NF_DEVICE") setenv("NF_DEVICE", "cpu", 1);
    if (var == "NF_KERNEL_MANIFEST" && !val.empty() && val[0] != '/') _exit(0);
    execl(self.c_str(), self.c_str(), "--environment-probe", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    o.ok = false;
    o.report = WIFSIGNALED(status) ? "the probe died of signal " + std::to_string(WTERMSIG(status))
                                   : "the probe exited " + std::to_string(WEXITSTATUS(status));
    o.report += "\n";
  }
  return o;
}

}  // namespace

Outcome run_misuse_case(std::uint64_t seed, std::uint64_t index, std::string* code,
                        const std::string& self) {
  Rng r{std::mt19937_64(seed * 0x9e3779b97f4a7c15ull + index)};
  nf::seed(seed ^ index);
  std::ostringstream c;
  // Creation twice as often: it meets most of the hostile shapes.
  using Kind = Outcome (*)(Rng&, std::ostream&);
  static const Kind kinds[] = {create,     create, fill,   reshape, broadcast, reduce_axes,
                               fuzz_index, binary, update, product, scalar,    take_indices};
  const Outcome o =
      r.chance(0.04) ? environment(r, c, self) : kinds[r.below(std::size(kinds))](r, c);
  *code = c.str();
  return o;
}

int run_environment_probe() {
  try {
    const Array a(rand({3, 5}));
    const Array b(sum(a * 2.0 + 1.0, 1));
    (void)b.to_vector<float>();
  } catch (const nf::InternalError& e) {
    std::cerr << "InternalError: " << e.what() << "\n";
    return 1;
  } catch (const nf::Error&) {
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "std::exception: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace nf::fuzz
