// A random permutation from the library's generator: the order of n keys it
// draws. The same seed draws the same keys on every backend, so the same
// permutation comes out on a GPU and on the CPU.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "numfuse/array.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/random.hpp"

namespace nf {

Array permutation(std::int64_t n) {
  if (n < 0) throw ValueError("permutation: n must be >= 0, got " + std::to_string(n));
  const std::vector<double> keys = Array(rand({n}, f64)).to_vector<double>();
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  // Stable, so that equal keys (a chance of about n^2 2^-54) keep one order.
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return keys[std::size_t(a)] < keys[std::size_t(b)];
  });
  return array(order, Shape{n});
}

}  // namespace nf
