// Free functions on arrays and expressions, named as in numpy. Each returns a
// lazy nf::Expr. Every op here is one row of numfuse's op table.
//
// One deliberate difference from numpy: reductions keep the reduced axes with
// length 1, so `A - mean(A, 1)` broadcasts row-wise as written; squeeze()
// drops them.
#pragma once

#include <cstdint>

#include "numfuse/dtype.hpp"
#include "numfuse/expr.hpp"
#include "numfuse/shape.hpp"

namespace nf {

// ---- elementwise, unary ----------------------------------------------------
// Functions marked (float) give a floating result for integer or bool input,
// as numpy does: i32/i64 -> f64, u8/bool -> f16.

// x's values, as numpy's copy: a statement that reads the result reads new
// memory rather than x's (a product of a view BLAS cannot read is one).
Expr copy(const Expr& x);
Expr negative(const Expr& x);
Expr abs(const Expr& x);
Expr sign(const Expr& x);
Expr exp(const Expr& x);         // (float)
Expr exp2(const Expr& x);        // (float)
Expr log(const Expr& x);         // (float)
Expr log2(const Expr& x);        // (float)
Expr log10(const Expr& x);       // (float)
Expr log1p(const Expr& x);       // (float)
Expr expm1(const Expr& x);       // (float)
Expr sqrt(const Expr& x);        // (float)
Expr rsqrt(const Expr& x);       // (float) 1/sqrt(x)
Expr cbrt(const Expr& x);        // (float)
Expr reciprocal(const Expr& x);  // (float) 1/x; unlike numpy, never integer division
Expr square(const Expr& x);
Expr sin(const Expr& x);       // (float)
Expr cos(const Expr& x);       // (float)
Expr tan(const Expr& x);       // (float)
Expr asin(const Expr& x);      // (float)
Expr acos(const Expr& x);      // (float)
Expr atan(const Expr& x);      // (float)
Expr sinh(const Expr& x);      // (float)
Expr cosh(const Expr& x);      // (float)
Expr tanh(const Expr& x);      // (float)
Expr sigmoid(const Expr& x);   // (float) 1/(1+exp(-x))
Expr logistic(const Expr& x);  // the same as sigmoid
Expr relu(const Expr& x);      // max(x, 0)
Expr gelu(const Expr& x);      // (float) x*Phi(x), the exact erf form
// (float) 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), PyTorch's gelu(approximate="tanh"):
// the form cuBLASLt's GELU epilogue computes, so gelu_tanh(dot(a, b) + bias) is one call.
Expr gelu_tanh(const Expr& x);
Expr softplus(const Expr& x);  // (float) log(1+exp(x)), computed stably
Expr erf(const Expr& x);       // (float)
Expr floor(const Expr& x);     // integers pass through unchanged
Expr ceil(const Expr& x);
Expr round(const Expr& x);  // half to even, as numpy
Expr trunc(const Expr& x);
Expr isnan(const Expr& x);        // -> bool
Expr isinf(const Expr& x);        // -> bool
Expr isfinite(const Expr& x);     // -> bool
Expr logical_not(const Expr& x);  // -> bool

// ---- elementwise, binary (operands broadcast) -------------------------------

Expr add(const Expr& a, const Expr& b);
Expr subtract(const Expr& a, const Expr& b);
Expr multiply(const Expr& a, const Expr& b);
Expr divide(const Expr& a, const Expr& b);     // true division: integers give f64
Expr remainder(const Expr& a, const Expr& b);  // sign of the divisor, as numpy's %
Expr power(const Expr& a, const Expr& b);
Expr pow(const Expr& a, const Expr& b);  // the same as power
Expr atan2(const Expr& y, const Expr& x);
Expr minimum(const Expr& a, const Expr& b);  // NaN propagates
Expr maximum(const Expr& a, const Expr& b);  // NaN propagates
Expr less(const Expr& a, const Expr& b);
Expr less_equal(const Expr& a, const Expr& b);
Expr equal(const Expr& a, const Expr& b);
Expr not_equal(const Expr& a, const Expr& b);
Expr greater(const Expr& a, const Expr& b);
Expr greater_equal(const Expr& a, const Expr& b);
Expr logical_and(const Expr& a, const Expr& b);
Expr logical_or(const Expr& a, const Expr& b);

Expr where(const Expr& cond, const Expr& a, const Expr& b);
Expr clip(const Expr& x, const Expr& lo, const Expr& hi);
Expr astype(const Expr& x, DType t);

inline Expr operator+(const Expr& a, const Expr& b) {
  return add(a, b);
}
inline Expr operator-(const Expr& a, const Expr& b) {
  return subtract(a, b);
}
inline Expr operator*(const Expr& a, const Expr& b) {
  return multiply(a, b);
}
inline Expr operator/(const Expr& a, const Expr& b) {
  return divide(a, b);
}
inline Expr operator%(const Expr& a, const Expr& b) {
  return remainder(a, b);
}
inline Expr operator-(const Expr& a) {
  return negative(a);
}
inline Expr operator+(const Expr& a) {
  return a;
}
inline Expr operator<(const Expr& a, const Expr& b) {
  return less(a, b);
}
inline Expr operator<=(const Expr& a, const Expr& b) {
  return less_equal(a, b);
}
inline Expr operator==(const Expr& a, const Expr& b) {
  return equal(a, b);
}
inline Expr operator!=(const Expr& a, const Expr& b) {
  return not_equal(a, b);
}
inline Expr operator>(const Expr& a, const Expr& b) {
  return greater(a, b);
}
inline Expr operator>=(const Expr& a, const Expr& b) {
  return greater_equal(a, b);
}
inline Expr operator&&(const Expr& a, const Expr& b) {
  return logical_and(a, b);
}
inline Expr operator||(const Expr& a, const Expr& b) {
  return logical_or(a, b);
}
inline Expr operator!(const Expr& a) {
  return logical_not(a);
}

// ---- reductions ------------------------------------------------------------
// Over all axes by default, one axis (`sum(A, 1)`) or several (`sum(A, {0, 2})`).
// Reduced axes are kept with length 1.

Expr sum(const Expr& x, Axes axes = {});   // integers and bool sum in i64
Expr prod(const Expr& x, Axes axes = {});  // integers and bool multiply in i64
Expr mean(const Expr& x, Axes axes = {});  // integers give f64
Expr var(const Expr& x, Axes axes = {}, int ddof = 0);
Expr std(const Expr& x, Axes axes = {}, int ddof = 0);
Expr min(const Expr& x, Axes axes = {});
Expr max(const Expr& x, Axes axes = {});
Expr argmin(const Expr& x, int axis);  // -> i64, first index on ties
Expr argmax(const Expr& x, int axis);
Expr argmin(const Expr& x);  // index into the flattened array
Expr argmax(const Expr& x);
Expr any(const Expr& x, Axes axes = {});
// all(...) is nf::all, declared in array.hpp beside the full slice it shares a name with.
Expr logsumexp(const Expr& x, Axes axes = {});
Expr norm(const Expr& x,
          Axes axes = {});  // sqrt(sum(x * x)), the Euclidean norm; integers give f64

// ---- shape ops on expressions ------------------------------------------------

Expr reshape(const Expr& x, Shape shape);
Expr transpose(const Expr& x, std::vector<int> perm = {});
Expr squeeze(const Expr& x, Axes axes = {});
Expr expand_dims(const Expr& x, int axis);
Expr broadcast_to(const Expr& x, Shape shape);

// ---- indexing with arrays -------------------------------------------------------
// numpy's take: the elements of `a` at `indices` (an integer array) along
// `axis`, of shape a.shape[:axis] + indices.shape + a.shape[axis+1:]; without
// an axis, of `a` flattened. A statement reading the result gathers straight
// from `a`'s memory, one kernel.
//   raise: an index outside -n .. n-1 (n = a.shape[axis]) is a ValueError
//          naming it; negative indices count from the end. The check reads
//          the largest index back from the device, so the call waits for it.
//   wrap:  indices taken modulo n; clip: clipped to 0 .. n-1, as numpy's
//          modes. Neither checks, so neither waits.
enum class TakeMode : std::uint8_t { raise, wrap, clip };

Expr take(const Expr& a, const Expr& indices, int axis, TakeMode mode = TakeMode::raise);
Expr take(const Expr& a, const Expr& indices);

// Selection by a boolean mask, numpy's a[mask]: extract takes the elements
// of `a` (flattened) where `condition` (of a's size) is true; compress the
// slices along `axis` where the 1-D `condition` is, as numpy's. The mask is
// read back to the host to find the result's length, so the call waits for it.
Expr extract(const Expr& condition, const Expr& a);
Expr compress(const Expr& condition, const Expr& a, int axis);

// ---- products ----------------------------------------------------------------
// dot: numpy's rules for 1-D and 2-D operands. matmul: also batched (..., M, K)
// @ (..., K, N) with broadcast batch axes. On a GPU they run through cuBLASLt;
// `dot(a, b) + bias`, `relu(dot(a, b) + bias)` and `gelu_tanh(dot(a, b) + bias)`
// with a bias along the last axis run as that one call.

Expr dot(const Expr& a, const Expr& b);
Expr matmul(const Expr& a, const Expr& b);

// How f32 products compute on a GPU. f32, the default, is numpy's answer: f32
// multiplies and sums, within 4 sqrt(K) 2^-24 (|A| |B|)ij of the exact product.
// The faster modes round each f32 operand on tensor cores and sum in f32:
//   tf32: 10 mantissa bits, within 2^-9 (|A| |B|)ij (several times the f32 rate);
//   bf16: 7 mantissa bits or tf32's 10, whichever cuBLASLt finds faster (as
//         PyTorch's "medium"; an H200 runs tf32), within 2^-6 (|A| |B|)ij.
// The setting belongs to the calling thread and is taken by the products it
// builds after it (a product keeps the mode it was built with). f64, f16 and
// bf16 products, and the CPU backend, always compute at full precision.
enum class MatmulPrecision : std::uint8_t { f32, tf32, bf16 };
inline constexpr MatmulPrecision tf32 = MatmulPrecision::tf32;

void set_matmul_precision(MatmulPrecision p);
// nf::f32 or nf::bf16, the modes named by a dtype; another dtype is a ValueError.
void set_matmul_precision(DType t);
MatmulPrecision matmul_precision();

}  // namespace nf
