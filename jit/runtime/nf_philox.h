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
// transforms reproduce curand_uniform4, curand_normal4, curand_uniform2_double
// and curand_normal2_double. Uniform values therefore match cuRAND bit for
// bit. Normal values use cuRAND's formulas, but its device code calls
// __sincosf (a fast approximation: f32 results differ by up to ~3e-6) and
// sincospi where these functions call sinf/cosf and sin(pi * v). numfuse's
// GPU kernels call these functions, not cuRAND's, so the backends' normals
// agree to the accuracy of each platform's sin, cos and log (within 3 ulp
// between CUDA's and glibc's), provided kernels are compiled without
// --use_fast_math.
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

// Box-Muller radius and angle, as cuRAND's _curand_box_muller. The angle is
// y * 2^-32 * 2pi + 2^-32 * pi with cuRAND's constant 2^-32 * 6.2831855f (the
// float nearest 2pi, scaled exactly by 2^-32). That product is not exact, so
// fused and unfused forms differ; fmaf is what nvcc and NVRTC emit for
// cuRAND's expression under their default --fmad=true.
NF_HD float nf_box_muller_radius_f32(unsigned int x) {
  return sqrtf(-2.0f * logf(nf_uniform_f32(x)));
}

NF_HD float nf_box_muller_angle_f32(unsigned int y) {
  return fmaf((float)y, 0x1.921fb6p-30f, 0x1.921fb6p-31f);
}

// (sin(v) * s, cos(v) * s): two independent standard normals.
NF_HD nf_f32x2 nf_box_muller_f32(unsigned int x, unsigned int y) {
  float s = nf_box_muller_radius_f32(x);
  float v = nf_box_muller_angle_f32(y);
  nf_f32x2 out = {sinf(v) * s, cosf(v) * s};
  return out;
}

// cuRAND's _curand_box_muller_double: the radius from the 53-bit uniform of
// (x0, x1), the angle pi * v with v = zy * 2^-52 + 2^-53 in (0, 2] from the
// 53 bits zy of (y0, y1); as above, only the addition rounds.
NF_HD double nf_box_muller_radius_f64(unsigned int x0, unsigned int x1) {
  return sqrt(-2.0 * log(nf_uniform_f64(x0, x1)));
}

NF_HD double nf_box_muller_angle_f64(unsigned int y0, unsigned int y1) {
  unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << (53 - 32));
  return ((double)zy * 0x1p-52 + 0x1p-53) * 3.1415926535897932;
}

NF_HD nf_f64x2 nf_box_muller_f64(unsigned int x0, unsigned int x1, unsigned int y0,
                                 unsigned int y1) {
  double s = nf_box_muller_radius_f64(x0, x1);
  double v = nf_box_muller_angle_f64(y0, y1);
  nf_f64x2 out = {sin(v) * s, cos(v) * s};
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
  float v = nf_box_muller_angle_f32(high_pair ? r.w : r.y);
  return (i & 1) ? cosf(v) * s : sinf(v) * s;
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
  return (i & 1) ? cos(v) * s : sin(v) * s;
}
