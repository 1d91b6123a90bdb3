// f16 and bf16 storage: conversion to and from f32, rounding to nearest even.
// Written with integer operations so that host and device produce the same
// bits; a device takes the conversion instructions (bf16 from sm_80), which
// give those bits (a NaN's aside) in one instruction where the integer path
// takes up to ~20, enough to make a half-precision kernel compute-bound
// (bench/RESULTS.md).
#pragma once

#include "nf_defs.h"

#if (defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)) && !defined(NF_EMULATOR)
#define NF_F16_INSTRUCTIONS 1
#endif

NF_HD unsigned short nf_f32_to_f16_bits(float f) {
#ifdef NF_F16_INSTRUCTIONS
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const unsigned int x = nf_float_bits(f);
  const unsigned int sign = (x >> 16) & 0x8000u;
  const unsigned int a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds past 65504
  if (a >= 0x38800000u) {  // normal f16: rebias the exponent, round the mantissa
    const unsigned int r = a + 0xfffu + ((a >> 13) & 1u);
    return (unsigned short)(sign | ((r - 0x38000000u) >> 13));
  }
  if (a <= 0x33000000u) return (unsigned short)sign;  // at most 2^-25: ties to zero
  // Subnormal f16: a multiple of 2^-24; rintf rounds half to even.
  const float m = rintf(nf_bits_float(a) * 16777216.0f);
  return (unsigned short)(sign | (unsigned int)m);
#endif
}

NF_HD float nf_f16_bits_to_f32(unsigned short h) {
#ifdef NF_F16_INSTRUCTIONS
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const unsigned int sign = ((unsigned int)h & 0x8000u) << 16;
  const unsigned int e = (h >> 10) & 0x1fu;
  const unsigned int m = h & 0x3ffu;
  if (e == 0) {
    const float v = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return nf_bits_float(nf_float_bits(v) | sign);
  }
  if (e == 31) return nf_bits_float(sign | 0x7f800000u | (m << 13));
  return nf_bits_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

NF_HD unsigned short nf_f32_to_bf16_bits(float f) {
#if defined(NF_F16_INSTRUCTIONS) && __CUDA_ARCH__ >= 800
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
#else
  const unsigned int x = nf_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);  // quiet NaN
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
#endif
}

// On a device, one instruction that each use repeats: the compiler then
// converts an element where it is used, where a shift let it convert every
// held element once and keep the floats live across a row's meeting (bf16
// kernels spilled at 64 registers where f16 ones of the same launch did not;
// bench/RESULTS.md).
NF_HD float nf_bf16_bits_to_f32(unsigned short b) {
#ifdef NF_F16_INSTRUCTIONS
  float f;
  asm("mov.b32 %0, {0, %1};" : "=f"(f) : "h"(b));
  return f;
#else
  return nf_bits_float((unsigned int)b << 16);
#endif
}
