// Counter-based random numbers: Philox4x32-10 and the value transforms that
// turn its words into uniform and normal floats.
//
// The stream definition below is numfuse's contract: every backend computes
// element i of a random op from (seed, stream, i) alone, with exactly this
// layout, so a seed gives the same numbers on the GPU and on the CPU and a
// random op can be fused into any kernel without materialising it.
//
//   A random op has a 64-bit seed and a 64-bit stream id.
//   key = (seed low 32 bits, seed high 32 bits).
//   For a 64-bit block number b,
//     counter(b) = (b low 32, b high 32, stream low 32, stream high 32)
//     (x, y, z, w) = philox4x32_10(counter(b), key)
//   Element i is the linear C-order index into the op's output.
//
//   f32, f16, bf16 uniform: b = i / 4, lane = i % 4,
//     value = nf_uniform_f32(word lane of (x, y, z, w)). f16 and bf16 ops
//     (and f32 ops computed in f64 on the CPU) take the f32 values, as they
//     take the f32 normals below; storing rounds them to the storage type.
//   f32 normal: b = i / 4; lanes 0 and 1 are Box-Muller of the pair (x, y),
//     lanes 2 and 3 of the pair (z, w); even lanes take the sine output, odd
//     lanes the cosine output.
//   f64 uniform: b = i / 2; even i is nf_uniform_f64(x, y), odd i is
//     nf_uniform_f64(z, w).
//   f64 normal: b = i / 2; one double Box-Muller of (x, y, z, w): the radius
//     comes from (x, y), the angle from (z, w); even i takes the sine output,
//     odd i the cosine output.
//
// This is cuRAND's own layout: counter(b) is the counter of a
// curandStatePhilox4_32_10_t after curand_init(seed, stream, 4 * b), and the
// uniform transforms reproduce curand_uniform4 and curand_uniform2_double, so
// uniform values match cuRAND's bit for bit. The normals pair and place the
// words as curand_normal4 and curand_normal2_double do (Box-Muller, the same
// radius and angle words, sine then cosine), but compute the log, sine and
// cosine with numfuse's own functions below rather than a platform's libm,
// so the CPU backend and the GPU kernels give identical bits. They are not
// cuRAND's normal values, which come from CUDA's libm and, for f32, from the
// fast approximation __sincosf. The functions assume IEEE division and
// square root and no flushing of subnormals: NVRTC's defaults, which
// numfuse's kernels keep (no --use_fast_math).
#pragma once

#include "nf_defs.h"

struct nf_u32x4 {
  unsigned int x, y, z, w;
};

struct nf_f32x2 {
  float x, y;
};

struct nf_f64x2 {
  double x, y;
};

NF_HD void nf_philox_mulhilo(unsigned int a, unsigned int b, unsigned int* hi, unsigned int* lo) {
  unsigned long long product = (unsigned long long)a * b;
  *hi = (unsigned int)(product >> 32);
  *lo = (unsigned int)product;
}

NF_HD nf_u32x4 nf_philox4x32_round(nf_u32x4 ctr, unsigned int key0, unsigned int key1) {
  unsigned int hi0, lo0, hi1, lo1;
  nf_philox_mulhilo(0xD2511F53u, ctr.x, &hi0, &lo0);
  nf_philox_mulhilo(0xCD9E8D57u, ctr.z, &hi1, &lo1);
  nf_u32x4 out = {hi1 ^ ctr.y ^ key0, lo1, hi0 ^ ctr.w ^ key1, lo0};
  return out;
}

// Bit-identical to Random123's philox4x32_10 and cuRAND's curand_Philox4x32_10.
NF_HD nf_u32x4 nf_philox4x32_10(nf_u32x4 ctr, unsigned int key0, unsigned int key1) {
  for (int round = 0; round < 9; ++round) {
    ctr = nf_philox4x32_round(ctr, key0, key1);
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return nf_philox4x32_round(ctr, key0, key1);
}

// x * 2^-32 + 2^-33 in (0, 1], as cuRAND's _curand_uniform. The product of a
// float and a power of two is exact (no overflow or underflow is possible
// here), so the fused multiply-add rounds once, exactly where the unfused
// expression rounds: fmaf gives the same bits whether or not a compiler would
// have contracted cuRAND's expression. x = 0xffffffff converts to 2^32 and
// gives 1.0f; x = 0 gives 2^-33.
NF_HD float nf_uniform_f32(unsigned int x) {
  return fmaf((float)x, 0x1p-32f, 0x1p-33f);
}

// cuRAND's _curand_uniform_double_hq: 53 random bits, z * 2^-53 + 2^-54 in
// (0, 1]. z < 2^53 converts to double exactly and the product is exact, so
// only the addition rounds, contracted to an fma or not (plain arithmetic
// here: a host without FMA hardware would emulate fma in software).
NF_HD double nf_uniform_f64(unsigned int x, unsigned int y) {
  unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
  return (double)z * 0x1p-53 + 0x1p-54;
}

// ---- Box-Muller --------------------------------------------------------------
//
// The log, sine and cosine below are numfuse's own, so that the normals come
// out with the same bits on both backends: CUDA's libm and glibc differ in
// the last bits. They use only operations that IEEE 754 rounds exactly once
// on every platform: + - * /, sqrt, fma (written out), integer operations on
// the bits, comparisons and selects. Contraction is the remaining hazard:
// NVRTC (--fmad=true) turns a product feeding a sum into an fma, host C++
// does not. So every product here that feeds a sum is either an explicit
// fmaf/fma or nf_mul_rn, except products by powers of two, which are exact
// either way; the final products radius * sine and radius * cosine are
// nf_mul_rn too, so that a fused consumer (randn() * a + b) cannot absorb them.

// log(u) for u a positive normal float (here u in (0, 1]). u = 2^k m with m
// in [sqrt(1/2), sqrt(2)), and log(m) = log1p(f) with f = m - 1 (exact) is
// 2 atanh(s), s = f / (2 + f), |s| < 0.1716. As in fdlibm's log, it is
// evaluated as f - hfsq + s (hfsq + R(s^2)) with hfsq = f^2 / 2, which keeps
// the rounding errors of s and hfsq out of the leading term f; R is a minimax
// polynomial. Within 1 ulp; log(1) is exactly 0.
NF_HD float nf_log_f32(float u) {
  const unsigned int bits = nf_float_bits(u) + (0x3f800000u - 0x3f3504f3u);
  const float k = (float)((int)(bits >> 23) - 127);
  const float f = nf_bits_float((bits & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float hfsq = nf_mul_rn(0.5f * f, f);
  const float q = fmaf(z, fmaf(z, 0x1.2eebd0p-2f, 0x1.997c06p-2f), 0x1.55555cp-1f);
  // k log(2) = k ln2_hi (exact inside the last fma) + k ln2_lo.
  const float tail = fmaf(s, fmaf(z, q, hfsq), nf_mul_rn(k, -0x1.05c610p-29f));
  return fmaf(k, 0x1.62e430p-1f, f - (hfsq - tail));
}

NF_HD double nf_log_f64(double u) {
  const unsigned long long bits =
      nf_double_bits(u) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  const double k = (double)((int)(bits >> 52) - 1023);
  const double f = nf_bits_double((bits & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double hfsq = nf_mul_rn(0.5 * f, f);
  const double q = fma(
      z,
      fma(z,
          fma(z,
              fma(z,
                  fma(z, fma(z, 0x1.2b5fb4b405474p-3, 0x1.39fdba110ecedp-3), 0x1.7462ba224ceb8p-3),
                  0x1.c71c62d05068cp-3),
              0x1.2492492e03d79p-2),
          0x1.9999999995224p-2),
      0x1.5555555555558p-1);
  const double tail = fma(s, fma(z, q, hfsq), nf_mul_rn(k, 0x1.abc9e3b39803fp-56));
  return fma(k, 0x1.62e42fefa39efp-1, f - (hfsq - tail));
}

// sin(pi t) if cosine is 0, cos(pi t) if it is 1. t = j / 2 + r with j the
// integer nearest 2t; r = t - j / 2 is exact (t and j / 2 are within a
// factor of two of each other, or j is 0) and |r| <= 1/4, so no argument
// reduction by an inexact pi is needed, and sin(pi t) = 0 and cos(pi t) = +-1
// exactly at the multiples of 1/2. Minimax polynomials in r^2 give sin(pi r)
// and cos(pi r), pi r taken as pi_hi r (exact inside the fma) + pi_lo r; the
// quadrant q = j + cosine picks one and its sign. Within 1.1 ulp.
NF_HD float nf_sincospi_f32(float t, unsigned int cosine) {
  const float j = rintf(2.0f * t);
  const float r = t - 0.5f * j;
  const float z = r * r;
  const unsigned int q = (unsigned int)(int)j + cosine;
  float v;
  if (q & 1) {
    const float c =
        fmaf(z, fmaf(z, fmaf(z, 0x1.db650ep-3f, -0x1.55cb98p+0f), 0x1.03c1eap+2f), -0x1.3bd3ccp+2f);
    v = fmaf(z, c, 1.0f);
  } else {
    const float p =
        fmaf(z, fmaf(z, fmaf(z, 0x1.4cb79ep-4f, -0x1.32ce1ep-1f), 0x1.466bc2p+1f), -0x1.4abbcep+2f);
    v = fmaf(r, 0x1.921fb6p+1f, fmaf(nf_mul_rn(r, z), p, nf_mul_rn(r, -0x1.777a5cp-24f)));
  }
  return (q & 2) ? -v : v;
}

NF_HD double nf_sincospi_f64(double t, unsigned int cosine) {
  const double j = rint(2.0 * t);
  const double r = t - 0.5 * j;
  const double z = r * r;
  const unsigned int q = (unsigned int)(int)j + cosine;
  double v;
  if (q & 1) {
    const double c = fma(z,
                         fma(z,
                             fma(z,
                                 fma(z,
                                     fma(z, fma(z, -0x1.b2f3fd835a289p-14, 0x1.f9ce249428494p-10),
                                         -0x1.a6d1eef4b828bp-6),
                                     0x1.e1f5068689166p-3),
                                 -0x1.55d3c7e3cb243p+0),
                             0x1.03c1f081b5ac0p+2),
                         -0x1.3bd3cc9be45dep+2);
    v = fma(z, c, 1.0);
  } else {
    const double p = fma(z,
                         fma(z,
                             fma(z,
                                 fma(z,
                                     fma(z, fma(z, -0x1.6cc5841818663p-16, 0x1.e8f036e18b1d9p-12),
                                         -0x1.e3074d263e023p-8),
                                     0x1.50783486fae01p-4),
                                 -0x1.32d2cce62b873p-1),
                             0x1.466bc6775aae1p+1),
                         -0x1.4abbce625be53p+2);
    v = fma(r, 0x1.921fb54442d18p+1, fma(nf_mul_rn(r, z), p, nf_mul_rn(r, 0x1.1a62633145c07p-53)));
  }
  return (q & 2) ? -v : v;
}

// Box-Muller radius and angle, after cuRAND's _curand_box_muller: the radius
// from the uniform of x, the angle 2 pi y 2^-32 + pi 2^-32, here as pi t with
// t = y 2^-31 + 2^-32 in (0, 2], rounded once by the fma.
NF_HD float nf_box_muller_radius_f32(unsigned int x) {
  return sqrtf(-2.0f * nf_log_f32(nf_uniform_f32(x)));
}

NF_HD float nf_box_muller_angle_f32(unsigned int y) {
  return fmaf((float)y, 0x1p-31f, 0x1p-32f);
}

// (sin(pi t) * s, cos(pi t) * s): two independent standard normals.
NF_HD nf_f32x2 nf_box_muller_f32(unsigned int x, unsigned int y) {
  const float s = nf_box_muller_radius_f32(x);
  const float t = nf_box_muller_angle_f32(y);
  nf_f32x2 out = {nf_mul_rn(nf_sincospi_f32(t, 0), s), nf_mul_rn(nf_sincospi_f32(t, 1), s)};
  return out;
}

// cuRAND's _curand_box_muller_double: the radius from the 53-bit uniform of
// (x0, x1), the angle pi v with v = zy * 2^-52 + 2^-53 in (0, 2] from the
// 53 bits zy of (y0, y1); as in nf_uniform_f64, only the addition rounds.
NF_HD double nf_box_muller_radius_f64(unsigned int x0, unsigned int x1) {
  return sqrt(-2.0 * nf_log_f64(nf_uniform_f64(x0, x1)));
}

NF_HD double nf_box_muller_angle_f64(unsigned int y0, unsigned int y1) {
  unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << (53 - 32));
  return (double)zy * 0x1p-52 + 0x1p-53;
}

NF_HD nf_f64x2 nf_box_muller_f64(unsigned int x0, unsigned int x1, unsigned int y0,
                                 unsigned int y1) {
  const double s = nf_box_muller_radius_f64(x0, x1);
  const double v = nf_box_muller_angle_f64(y0, y1);
  nf_f64x2 out = {nf_mul_rn(nf_sincospi_f64(v, 0), s), nf_mul_rn(nf_sincospi_f64(v, 1), s)};
  return out;
}

// The four words of block b of (seed, stream).
NF_HD nf_u32x4 nf_philox_block(unsigned long long seed, unsigned long long stream,
                               unsigned long long block) {
  nf_u32x4 ctr = {(unsigned int)block, (unsigned int)(block >> 32), (unsigned int)stream,
                  (unsigned int)(stream >> 32)};
  return nf_philox4x32_10(ctr, (unsigned int)seed, (unsigned int)(seed >> 32));
}

// Selects without indexing memory, so a GPU kernel keeps the words in registers.
NF_HD unsigned int nf_u32x4_lane(nf_u32x4 v, unsigned int lane) {
  return lane == 0 ? v.x : lane == 1 ? v.y : lane == 2 ? v.z : v.w;
}

// Element i of a random op, per the stream definition at the top of this file.
NF_HD float nf_rand_uniform_f32(unsigned long long seed, unsigned long long stream,
                                unsigned long long i) {
  nf_u32x4 r = nf_philox_block(seed, stream, i >> 2);
  return nf_uniform_f32(nf_u32x4_lane(r, (unsigned int)(i & 3)));
}

// Computes only the output element i needs; the sine and cosine halves are
// the same expressions nf_box_muller_f32 evaluates.
NF_HD float nf_rand_normal_f32(unsigned long long seed, unsigned long long stream,
                               unsigned long long i) {
  nf_u32x4 r = nf_philox_block(seed, stream, i >> 2);
  bool high_pair = (i & 2) != 0;
  float s = nf_box_muller_radius_f32(high_pair ? r.z : r.x);
  float t = nf_box_muller_angle_f32(high_pair ? r.w : r.y);
  return nf_mul_rn(nf_sincospi_f32(t, (unsigned int)(i & 1)), s);
}

NF_HD double nf_rand_uniform_f64(unsigned long long seed, unsigned long long stream,
                                 unsigned long long i) {
  nf_u32x4 r = nf_philox_block(seed, stream, i >> 1);
  return (i & 1) ? nf_uniform_f64(r.z, r.w) : nf_uniform_f64(r.x, r.y);
}

NF_HD double nf_rand_normal_f64(unsigned long long seed, unsigned long long stream,
                                unsigned long long i) {
  nf_u32x4 r = nf_philox_block(seed, stream, i >> 1);
  double s = nf_box_muller_radius_f64(r.x, r.y);
  double v = nf_box_muller_angle_f64(r.z, r.w);
  return nf_mul_rn(nf_sincospi_f64(v, (unsigned int)(i & 1)), s);
}

// ---- a thread's last block -----------------------------------------------------
//
// A kernel thread computes consecutive elements in its vector loop, and they
// share Philox blocks: four f32 values or two f64 values a block. Drawing a
// block once for all its elements, rather than once per element, is what
// keeps a random fill at the copy rate (ten Philox rounds per element are
// compute-bound). The memo holds the values of the block drawn last, made by
// the same transforms as the functions above, so the bits do not change. The
// CPU backend draws through the memo too.

struct nf_rand_memo_f32 {
  unsigned long long block;  // ~0: none yet (no element index reaches it)
  float v0, v1, v2, v3;
};

struct nf_rand_memo_f64 {
  unsigned long long block;
  double v0, v1;
};

NF_HD float nf_memo_lane(const nf_rand_memo_f32& m, unsigned long long i) {
  const unsigned int lane = (unsigned int)(i & 3);
  return lane == 0 ? m.v0 : lane == 1 ? m.v1 : lane == 2 ? m.v2 : m.v3;
}

NF_HD float nf_rand_uniform_f32(nf_rand_memo_f32& m, unsigned long long seed,
                                unsigned long long stream, unsigned long long i) {
  if (m.block != i >> 2) {
    m.block = i >> 2;
    nf_u32x4 r = nf_philox_block(seed, stream, m.block);
    m.v0 = nf_uniform_f32(r.x);
    m.v1 = nf_uniform_f32(r.y);
    m.v2 = nf_uniform_f32(r.z);
    m.v3 = nf_uniform_f32(r.w);
  }
  return nf_memo_lane(m, i);
}

NF_HD float nf_rand_normal_f32(nf_rand_memo_f32& m, unsigned long long seed,
                               unsigned long long stream, unsigned long long i) {
  if (m.block != i >> 2) {
    m.block = i >> 2;
    nf_u32x4 r = nf_philox_block(seed, stream, m.block);
    const nf_f32x2 low = nf_box_muller_f32(r.x, r.y), high = nf_box_muller_f32(r.z, r.w);
    m.v0 = low.x;
    m.v1 = low.y;
    m.v2 = high.x;
    m.v3 = high.y;
  }
  return nf_memo_lane(m, i);
}

NF_HD double nf_rand_uniform_f64(nf_rand_memo_f64& m, unsigned long long seed,
                                 unsigned long long stream, unsigned long long i) {
  if (m.block != i >> 1) {
    m.block = i >> 1;
    nf_u32x4 r = nf_philox_block(seed, stream, m.block);
    m.v0 = nf_uniform_f64(r.x, r.y);
    m.v1 = nf_uniform_f64(r.z, r.w);
  }
  return (i & 1) ? m.v1 : m.v0;
}

NF_HD double nf_rand_normal_f64(nf_rand_memo_f64& m, unsigned long long seed,
                                unsigned long long stream, unsigned long long i) {
  if (m.block != i >> 1) {
    m.block = i >> 1;
    nf_u32x4 r = nf_philox_block(seed, stream, m.block);
    const nf_f64x2 n = nf_box_muller_f64(r.x, r.y, r.z, r.w);
    m.v0 = n.x;
    m.v1 = n.y;
  }
  return (i & 1) ? m.v1 : m.v0;
}
