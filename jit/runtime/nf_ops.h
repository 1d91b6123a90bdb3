// One function per elementwise op of the op table (src/graph/ops.def), over
// the compute types of nf_defs.h, and the index rule of its take. Operands
// arrive already promoted: every overload here takes operands of one compute
// type. Integer arithmetic wraps (two's complement), as numpy's does, and is
// written so that C++ sees no signed overflow.
#pragma once

#include "nf_defs.h"

// ---- helpers -----------------------------------------------------------------

template <class T>
struct nf_is_float {
  static const bool value = false;
};
template <>
struct nf_is_float<nf_f32> {
  static const bool value = true;
};
template <>
struct nf_is_float<nf_f64> {
  static const bool value = true;
};

template <class T>
struct nf_unsigned_of {
  typedef T type;
};
template <>
struct nf_unsigned_of<nf_i32> {
  typedef unsigned int type;
};
template <>
struct nf_unsigned_of<nf_i64> {
  typedef unsigned long long type;
};
template <>
struct nf_unsigned_of<nf_u8> {
  typedef unsigned int type;
};

template <class T>
NF_HD T nf_wrap_add(T a, T b) {
  typedef typename nf_unsigned_of<T>::type U;
  return (T)((U)a + (U)b);
}
template <class T>
NF_HD T nf_wrap_sub(T a, T b) {
  typedef typename nf_unsigned_of<T>::type U;
  return (T)((U)a - (U)b);
}
template <class T>
NF_HD T nf_wrap_mul(T a, T b) {
  typedef typename nf_unsigned_of<T>::type U;
  return (T)((U)a * (U)b);
}

// Float functions: one f32 and one f64 overload, each calling the C math
// function of its precision.
#define NF_FLOAT_FN(name, f32_expr, f64_expr) \
  NF_HD nf_f32 name(nf_f32 x) {               \
    return f32_expr;                          \
  }                                           \
  NF_HD nf_f64 name(nf_f64 x) {               \
    return f64_expr;                          \
  }

// ---- unary -------------------------------------------------------------------

template <class T>
NF_HD T nf_copy(T x) {
  return x;
}

template <class T>
NF_HD T nf_negative(T x) {
  return nf_wrap_sub((T)0, x);
}
NF_HD nf_f32 nf_negative(nf_f32 x) {
  return -x;
}
NF_HD nf_f64 nf_negative(nf_f64 x) {
  return -x;
}

template <class T>
NF_HD T nf_abs(T x) {
  return x < (T)0 ? nf_negative(x) : x;
}
NF_HD nf_b8 nf_abs(nf_b8 x) {
  return x;
}
NF_HD nf_u8 nf_abs(nf_u8 x) {
  return x;
}
NF_FLOAT_FN(nf_abs, fabsf(x), fabs(x))

template <class T>
NF_HD T nf_sign(T x) {
  return (T)((x > (T)0) - (x < (T)0));
}
NF_FLOAT_FN(nf_sign, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x, x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x)

NF_FLOAT_FN(nf_exp, expf(x), exp(x))
NF_FLOAT_FN(nf_exp2, exp2f(x), exp2(x))
NF_FLOAT_FN(nf_log, logf(x), log(x))
NF_FLOAT_FN(nf_log2, log2f(x), log2(x))
NF_FLOAT_FN(nf_log10, log10f(x), log10(x))
NF_FLOAT_FN(nf_log1p, log1pf(x), log1p(x))
NF_FLOAT_FN(nf_expm1, expm1f(x), expm1(x))
NF_FLOAT_FN(nf_sqrt, sqrtf(x), sqrt(x))
NF_FLOAT_FN(nf_rsqrt, 1.0f / sqrtf(x), 1.0 / sqrt(x))
NF_FLOAT_FN(nf_cbrt, cbrtf(x), cbrt(x))
NF_FLOAT_FN(nf_reciprocal, 1.0f / x, 1.0 / x)
NF_FLOAT_FN(nf_sin, sinf(x), sin(x))
NF_FLOAT_FN(nf_cos, cosf(x), cos(x))
NF_FLOAT_FN(nf_tan, tanf(x), tan(x))
NF_FLOAT_FN(nf_asin, asinf(x), asin(x))
NF_FLOAT_FN(nf_acos, acosf(x), acos(x))
NF_FLOAT_FN(nf_atan, atanf(x), atan(x))
NF_FLOAT_FN(nf_sinh, sinhf(x), sinh(x))
NF_FLOAT_FN(nf_cosh, coshf(x), cosh(x))
NF_FLOAT_FN(nf_tanh, tanhf(x), tanh(x))
NF_FLOAT_FN(nf_sigmoid, nf_reciprocal_approx(1.0f + expf(-x)), 1.0 / (1.0 + exp(-x)))
NF_FLOAT_FN(nf_gelu, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)),
            0.5 * x * (1.0 + erf(x * 0.70710678118654752)))
NF_FLOAT_FN(nf_gelu_tanh,
            0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x))),
            0.5 * x * (1.0 + tanh(0.79788456080286536 * (x + 0.044715 * x * x * x))))
// log(1+exp(x)) without overflow for large x or cancellation for small.
NF_FLOAT_FN(nf_softplus, fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))),
            fmax(x, 0.0) + log1p(exp(-fabs(x))))
NF_FLOAT_FN(nf_erf, erff(x), erf(x))

template <class T>
NF_HD T nf_square(T x) {
  return nf_wrap_mul(x, x);
}
NF_FLOAT_FN(nf_square, x* x, x* x)

// x < 0 ? 0 : x lets NaN through, as numpy's maximum(x, 0) does.
template <class T>
NF_HD T nf_relu(T x) {
  return x < (T)0 ? (T)0 : x;
}

// Rounding: integers are already integral.
template <class T>
NF_HD T nf_floor(T x) {
  return x;
}
template <class T>
NF_HD T nf_ceil(T x) {
  return x;
}
template <class T>
NF_HD T nf_round(T x) {
  return x;
}
template <class T>
NF_HD T nf_trunc(T x) {
  return x;
}
NF_FLOAT_FN(nf_floor, floorf(x), floor(x))
NF_FLOAT_FN(nf_ceil, ceilf(x), ceil(x))
NF_FLOAT_FN(nf_round, rintf(x), rint(x))  // half to even, as numpy
NF_FLOAT_FN(nf_trunc, truncf(x), trunc(x))

template <class T>
NF_HD nf_b8 nf_isnan(T) {
  return false;
}
template <class T>
NF_HD nf_b8 nf_isinf(T) {
  return false;
}
template <class T>
NF_HD nf_b8 nf_isfinite(T) {
  return true;
}
NF_HD nf_b8 nf_isnan(nf_f32 x) {
  return x != x;
}
NF_HD nf_b8 nf_isnan(nf_f64 x) {
  return x != x;
}
NF_HD nf_b8 nf_isinf(nf_f32 x) {
  return x == x && x - x != 0.0f;
}
NF_HD nf_b8 nf_isinf(nf_f64 x) {
  return x == x && x - x != 0.0;
}
NF_HD nf_b8 nf_isfinite(nf_f32 x) {
  return x - x == 0.0f;
}
NF_HD nf_b8 nf_isfinite(nf_f64 x) {
  return x - x == 0.0;
}

NF_HD nf_b8 nf_logical_not(nf_b8 x) {
  return !x;
}

// ---- binary ------------------------------------------------------------------

template <class T>
NF_HD T nf_add(T a, T b) {
  return nf_wrap_add(a, b);
}
template <class T>
NF_HD T nf_subtract(T a, T b) {
  return nf_wrap_sub(a, b);
}
template <class T>
NF_HD T nf_multiply(T a, T b) {
  return nf_wrap_mul(a, b);
}
NF_HD nf_b8 nf_add(nf_b8 a, nf_b8 b) {
  return a || b;
}  // numpy: logical or
NF_HD nf_b8 nf_multiply(nf_b8 a, nf_b8 b) {
  return a && b;
}  // numpy: logical and
NF_HD nf_f32 nf_add(nf_f32 a, nf_f32 b) {
  return a + b;
}
NF_HD nf_f64 nf_add(nf_f64 a, nf_f64 b) {
  return a + b;
}
NF_HD nf_f32 nf_subtract(nf_f32 a, nf_f32 b) {
  return a - b;
}
NF_HD nf_f64 nf_subtract(nf_f64 a, nf_f64 b) {
  return a - b;
}
NF_HD nf_f32 nf_multiply(nf_f32 a, nf_f32 b) {
  return a * b;
}
NF_HD nf_f64 nf_multiply(nf_f64 a, nf_f64 b) {
  return a * b;
}

NF_HD nf_f32 nf_divide(nf_f32 a, nf_f32 b) {
  return a / b;
}
NF_HD nf_f64 nf_divide(nf_f64 a, nf_f64 b) {
  return a / b;
}

// numpy's remainder: the result takes the sign of the divisor; x % 0 is 0
// for integers.
template <class T>
NF_HD T nf_remainder(T a, T b) {
  if (b == (T)0 || b == (T)-1) return (T)0;  // b == -1 also avoids INT_MIN % -1
  T r = (T)(a % b);
  if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);
  return r;
}
NF_HD nf_u8 nf_remainder(nf_u8 a, nf_u8 b) {
  return b ? (nf_u8)(a % b) : (nf_u8)0;
}
#define NF_FLOAT_REMAINDER(T, FMOD, COPYSIGN)            \
  NF_HD T nf_remainder(T a, T b) {                       \
    T r = FMOD(a, b);                                    \
    if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r += b; \
    return r == (T)0 ? COPYSIGN((T)0, b) : r;            \
  }
NF_FLOAT_REMAINDER(nf_f32, fmodf, copysignf)
NF_FLOAT_REMAINDER(nf_f64, fmod, copysign)
#undef NF_FLOAT_REMAINDER

// Integer powers by squaring, wrapping. A negative exponent gives 0 unless
// the base is 1 or -1 (0 to a negative power too): numpy raises instead, and
// numfuse does where the exponent is a scalar (graph/build.cpp); an array's
// exponents are only seen here, by the kernel, which cannot raise.
template <class T>
NF_HD T nf_power(T a, T b) {
  if (b < (T)0) {
    if (a == (T)1) return (T)1;
    if (a == (T)-1) return (b % 2) ? (T)-1 : (T)1;
    return (T)0;
  }
  T r = (T)1;
  while (b) {
    if (b & 1) r = nf_wrap_mul(r, a);
    a = nf_wrap_mul(a, a);
    b = (T)(b >> 1);
  }
  return r;
}
NF_HD nf_f32 nf_power(nf_f32 a, nf_f32 b) {
  return powf(a, b);
}
NF_HD nf_f64 nf_power(nf_f64 a, nf_f64 b) {
  return pow(a, b);
}

NF_HD nf_f32 nf_atan2(nf_f32 y, nf_f32 x) {
  return atan2f(y, x);
}
NF_HD nf_f64 nf_atan2(nf_f64 y, nf_f64 x) {
  return atan2(y, x);
}

// NaN propagates, as in numpy's minimum and maximum.
template <class T>
NF_HD T nf_minimum(T a, T b) {
  return (a != a || a < b) ? a : b;
}
template <class T>
NF_HD T nf_maximum(T a, T b) {
  return (a != a || a > b) ? a : b;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(NF_EMULATOR)
// On sm_80 and later a float's takes one instruction rather than a compare, a
// NaN test and a select (three of the 34 instructions an element of softmax's
// kernel). It gives the canonical NaN rather than the operand's, and may pick
// the other zero of a +0/-0 tie. (The emulator on the host runs the generic
// form.)
template <>
NF_HD nf_f32 nf_minimum(nf_f32 a, nf_f32 b) {
  nf_f32 r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <>
NF_HD nf_f32 nf_maximum(nf_f32 a, nf_f32 b) {
  nf_f32 r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

template <class T>
NF_HD nf_b8 nf_less(T a, T b) {
  return a < b;
}
template <class T>
NF_HD nf_b8 nf_less_equal(T a, T b) {
  return a <= b;
}
template <class T>
NF_HD nf_b8 nf_equal(T a, T b) {
  return a == b;
}
template <class T>
NF_HD nf_b8 nf_not_equal(T a, T b) {
  return a != b;
}
template <class T>
NF_HD nf_b8 nf_greater(T a, T b) {
  return a > b;
}
template <class T>
NF_HD nf_b8 nf_greater_equal(T a, T b) {
  return a >= b;
}

NF_HD nf_b8 nf_logical_and(nf_b8 a, nf_b8 b) {
  return a && b;
}
NF_HD nf_b8 nf_logical_or(nf_b8 a, nf_b8 b) {
  return a || b;
}

// ---- ternary -----------------------------------------------------------------

template <class T>
NF_HD T nf_where(nf_b8 c, T a, T b) {
  return c ? a : b;
}
template <class T>
NF_HD T nf_clip(T x, T lo, T hi) {
  return nf_minimum(nf_maximum(x, lo), hi);
}

// ---- take --------------------------------------------------------------------
// Where numpy's take lands index v along an axis of length n, in each of its
// modes (raise: v already checked to lie in -n .. n-1): what the generated
// gather kernel calls as nf_take_<mode>, and the CPU backend's gather step.

NF_HD long long nf_take_raise(long long v, long long n) {
  return v < 0 ? v + n : v;
}
NF_HD long long nf_take_wrap(long long v, long long n) {
  return (v % n + n) % n;
}
NF_HD long long nf_take_clip(long long v, long long n) {
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

#undef NF_FLOAT_FN
