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
