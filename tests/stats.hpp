// Statistics the random-number tests of both backends check draws with:
// sample moments and the Kolmogorov-Smirnov statistic against a CDF.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace nf::test {

inline double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

inline double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size() - 1);
}

// sup |F_n(x) - F(x)|. Ties are handled: within a run of equal values the
// largest gap is taken at the run's ends.
inline double ks_statistic(std::vector<double> v, const std::function<double(double)>& cdf) {
  std::sort(v.begin(), v.end());
  const double n = double(v.size());
  double d = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double f = cdf(v[i]);
    d = std::max({d, double(i + 1) / n - f, f - double(i) / n});
  }
  return d;
}

inline double uniform_cdf(double x) {
  return std::clamp(x, 0.0, 1.0);
}
inline double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// The Kolmogorov-Smirnov critical value at the 1% level for n draws.
inline double ks_bound(std::size_t n) {
  return 1.63 / std::sqrt(double(n));
}

}  // namespace nf::test
