// Random expressions. Each call takes the next stream of the current seed, so
// a program's numbers depend only on the seed and the order of its calls.
#include <atomic>

#include "graph/build.hpp"
#include "numfuse/ops.hpp"
#include "numfuse/random.hpp"

namespace nf {
namespace {

std::atomic<std::uint64_t> g_seed{0};
std::atomic<std::uint64_t> g_stream{0};

Expr draw(OpId op, const Shape& shape, DType t) {
  return Expr(make_random(op, shape, t, g_seed.load(), g_stream.fetch_add(1)));
}

DType random_dtype(DType t) {
  return is_floating(t) ? t : default_float;
}

}  // namespace

void seed(std::uint64_t s) {
  g_seed = s;
  g_stream = 0;
}

Expr rand(const Shape& shape, DType dtype) {
  return draw(OpId::rand_uniform, shape, dtype);
}
Expr randn(const Shape& shape, DType dtype) {
  return draw(OpId::rand_normal, shape, dtype);
}
Expr rand_like(const Expr& x) {
  return rand(x.shape(), random_dtype(x.dtype()));
}
Expr randn_like(const Expr& x) {
  return randn(x.shape(), random_dtype(x.dtype()));
}

Expr bernoulli(const Expr& p) {
  const DType t = random_dtype(p.dtype());
  return astype(rand(p.shape(), t) <= p, t);
}

Expr bernoulli(const Shape& shape, double p, DType dtype) {
  return astype(rand(shape, dtype) <= p, dtype);
}

}  // namespace nf
