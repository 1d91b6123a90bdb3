// Counter-based random numbers (Philox4x32-10). Each call draws a fresh stream
// from the global seed; the same seed gives the same numbers on every backend.
// Random expressions are lazy and fuse into the kernels that use them.
#pragma once

#include <cstdint>

#include "numfuse/array.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/expr.hpp"
#include "numfuse/shape.hpp"

namespace nf {

// Resets the generator: the calls after it draw the same numbers every run.
void seed(std::uint64_t s);

// Uniform on (0, 1]; in f16, draws below its smallest value (2^-24) round to 0.
Expr rand(const Shape& shape, DType dtype = default_float);
Expr randn(const Shape& shape, DType dtype = default_float);  // standard normal
Expr rand_like(const Expr& x);  // uniform, x's shape and (floating) dtype
Expr randn_like(const Expr& x);
// 1 with probability p, else 0, in p's dtype (f32 for an integer p).
Expr bernoulli(const Expr& p);
Expr bernoulli(const Shape& shape, double p, DType dtype = default_float);

// 0 .. n-1 in a random order (i64), as numpy's permutation(n): the same seed
// gives the same order on every backend. Evaluated now, unlike the draws above.
Array permutation(std::int64_t n);

}  // namespace nf
