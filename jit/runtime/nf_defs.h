// Definitions shared by every file of jit/runtime. These headers are compiled
// twice: by NVRTC into every generated kernel, and as host C++ by the CPU
// backend, so both backends compute each op with the same code.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NF_HD __host__ __device__ __forceinline__
#else
#include <math.h>
#define NF_HD inline
#endif

// Compute types: one per dtype (f16 and bf16 compute as nf_f32).
typedef bool nf_b8;
typedef unsigned char nf_u8;
typedef int nf_i32;
typedef long long nf_i64;
typedef float nf_f32;
typedef double nf_f64;

// Device code reinterprets bits with intrinsics; host code (and nvcc's host
// pass) with memcpy.
#if !defined(__CUDACC_RTC__)
#include <string.h>
#endif
NF_HD unsigned int nf_float_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __float_as_uint(f);
#else
  unsigned int u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}
NF_HD float nf_bits_float(unsigned int u) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}
NF_HD unsigned long long nf_double_bits(double d) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return (unsigned long long)__double_as_longlong(d);
#else
  unsigned long long u;
  memcpy(&u, &d, sizeof u);
  return u;
#endif
}
NF_HD double nf_bits_double(unsigned long long u) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __longlong_as_double((long long)u);
#else
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
#endif
}

// A product rounded on its own, for code that must give the same bits on
// both backends. NVRTC compiles kernels with --fmad=true and contracts a
// product and a sum that uses it into one fma, even across statements and
// inlined calls, where host C++ (-ffp-contract=off) rounds both; the
// device's explicitly rounded multiplies are never contracted.
NF_HD float nf_mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
NF_HD double nf_mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// 1 / d where a few ulp do not matter. The device divides approximately
// (__fdividef, within 2 ulp; 0 for d above 2^126): IEEE division's slow-path
// check diverges within warps on ordinary data and cost fused chains a tenth
// of their bandwidth (bench/RESULTS.md). The host divides exactly.
NF_HD float nf_reciprocal_approx(float d) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  return __fdividef(1.0f, d);
#else
  return 1.0f / d;
#endif
}
