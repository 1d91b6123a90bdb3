// What the GPU product tests share: random operands drawn on the CPU, the
// error bound of a product, and whether a statement runs on the GPU.
//
// The error of an entry of A.B grows with the magnitudes summed into it:
// within rtol (|A| |B|)ij, where rtol is 4 sqrt(k) units of the accumulating
// type at full precision (a precision mode adds its rounding of the
// operands), plus the final rounding to the result's dtype (subnormal
// results included).
#pragma once

#include <cstdint>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace nf::test {

inline const Device kCpu = Device::cpu();
inline const Device kGpu{Device::Kind::cuda, 0};

// Uniform values in [-1, 1] of dtype t, drawn on the CPU.
Array host_uniform(const Shape& shape, DType t);

// The unit roundoff of the type a product of dtype t accumulates in (f32
// for f16 and bf16).
double unit(DType t);
double half_ulp(DType t);
// Half the spacing of subnormals: below the smallest normal number a result
// is rounded to a step that no longer shrinks with it (f16: 2^-24).
double half_subnormal_step(DType t);

// 4 sqrt(k) unit(t): the bound on (A.B - exact) / (|A| |B|) at full precision.
double product_rtol(std::int64_t k, DType t);

// Each element of `got` (on the GPU) within tol[i] of want[i].
void check_within(const Array& got, const std::vector<double>& want,
                  const std::vector<double>& tol);

// `got` (on the GPU) against A.B in f64 on the CPU, of the same shape and within
// rtol (|A| |B|)ij + half an ulp of got's dtype + half its subnormal step.
void compare_product(const Array& got, const Array& a, const Array& b, double rtol);
// The same at full precision: rtol = product_rtol(k, got's dtype).
void compare_product(const Array& got, const Array& a, const Array& b);

// Whether `y = e` on the GPU runs there, rather than on host copies.
bool runs_on_gpu(const Expr& e);

}  // namespace nf::test
