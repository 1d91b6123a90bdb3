#include "compare.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

namespace nf::fuzz {

Tolerance tolerance(DType t, int depth) {
  const double grow = 1 + 0.25 * depth;
  switch (t) {
    case DType::f64:
      return {false, 1e-9 * grow};
    case DType::f32:
      return {false, 1e-4 * grow};
    case DType::f16:
      return {false, 1e-2 * grow};
    case DType::bf16:
      return {false, 5e-2 * grow};
    default:
      return {true, 0};
  }
}

namespace {

std::string coordinates(const Shape& shape, std::size_t flat) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = std::int64_t(flat) % shape[d];
    flat /= std::size_t(shape[d]);
  }
  std::string t = "[";
  for (std::size_t d = 0; d < c.size(); ++d) t += (d ? ", " : "") + std::to_string(c[d]);
  return t + "]";
}

}  // namespace

std::string compare(const Array& got, const Array& want, const Tolerance& tol) {
  std::ostringstream out;
  out.precision(10);
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    out << "got " << name(got.dtype()) << to_string(got.shape()) << " where " << name(want.dtype())
        << to_string(want.shape()) << " was expected\n";
    return out.str();
  }
  std::vector<double> g(std::size_t(got.size())), w(std::size_t(want.size()));
  got.to(Device::cpu()).read_into(g.data(), f64);
  want.to(Device::cpu()).read_into(w.data(), f64);
  double scale = tol.magnitude;
  for (double x : w)
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    bool ok;
    if (std::isnan(w[i])) {
      ok = std::isnan(g[i]);
    } else if (std::isinf(w[i]) || tol.exact) {
      ok = g[i] == w[i];
    } else {
      ok = std::fabs(g[i] - w[i]) <= tol.rel * (std::fabs(w[i]) + scale);
    }
    if (ok) continue;
    if (bad++ < 5) {
      out << "  element " << coordinates(want.shape(), i) << ": got " << g[i] << ", expected "
          << w[i] << "\n";
    }
  }
  if (bad == 0) return {};
  std::ostringstream head;
  head << bad << " of " << g.size() << " elements of " << name(want.dtype())
       << to_string(want.shape()) << " differ (";
  if (tol.exact) {
    head << "exact";
  } else {
    head << "|got - expected| > " << tol.rel << " * (|expected| + " << scale << ")";
  }
  head << "):\n";
  return head.str() + out.str();
}

bool self_test() {
  bool all = true;
  auto check = [&](const char* what, bool caught) {
    std::printf("%s: %s\n", caught ? "ok" : "NOT CAUGHT", what);
    all = all && caught;
  };
  const std::vector<double> v = {1.5, 2.25, 0.0, 3.0, 1e-3, 7.0, 0.5, 2.0, 9.0};
  for (DType t : all_dtypes) {
    const Array want = Array(nf::array(v, {3, 3})).astype(t);
    const Tolerance tol = tolerance(t, 3);
    check((std::string(name(t)) + ": an equal copy passes").c_str(),
          compare(want.copy(), want, tol).empty());
    // One element moved by ten times the tolerance (or by one, or flipped).
    std::vector<double> p = v;
    p[4] = t == bool_ ? 0.0 : p[4] + (tol.exact ? 1 : 10 * tol.rel * (9 + 1e-3));
    const Array perturbed = Array(nf::array(p, {3, 3})).astype(t);
    check((std::string(name(t)) + ": one perturbed element is caught").c_str(),
          !compare(perturbed, want, tol).empty());
    check((std::string(name(t)) + ": another shape is caught").c_str(),
          !compare(perturbed.reshape({9}), want, tol).empty());
  }
  const double nan = std::nan(""), inf = HUGE_VAL;
  const Array special = nf::array(std::vector<double>{nan, inf, -inf, 1});
  const Tolerance loose = tolerance(bf16, 10);
  check("NaN matches NaN, inf matches inf", compare(special.copy(), special, loose).empty());
  check("a number where NaN was expected is caught",
        !compare(nf::array(std::vector<double>{0, inf, -inf, 1}), special, loose).empty());
  check("NaN where a number was expected is caught",
        !compare(nf::array(std::vector<double>{nan, inf, -inf, nan}), special, loose).empty());
  check("-inf where inf was expected is caught",
        !compare(nf::array(std::vector<double>{nan, -inf, -inf, 1}), special, loose).empty());
  check("another dtype is caught", !compare(special.astype(f32), special, loose).empty());
  return all;
}

}  // namespace nf::fuzz
