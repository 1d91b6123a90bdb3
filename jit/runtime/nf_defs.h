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

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
NF_HD unsigned int nf_float_bits(float f) {
  return __float_as_uint(f);
}
NF_HD float nf_bits_float(unsigned int u) {
  return __uint_as_float(u);
}
#else
#include <string.h>
NF_HD unsigned int nf_float_bits(float f) {
  unsigned int u;
  memcpy(&u, &f, sizeof u);
  return u;
}
NF_HD float nf_bits_float(unsigned int u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
#endif
