// Matrix products through cuBLASLt on a device's stream. One handle and one
// workspace a device, made at first use. A product's descriptors and the
// algorithm cuBLASLt's heuristic picks are made once for its layouts
// (plan_gemm) and reused by every run of statements with the same key.
#pragma once

#include <memory>

#include "plan/memory_layout.hpp"

namespace nf::cuda {

struct GemmPlan;

// C (m x n) = A (m x k) . B (k x n), all of dtype `t`, row-major as numpy
// sees them, each read where it lies: an operand with a unit stride along
// either axis is a layout cuBLASLt reads without a copy (a transposed view
// included). Null where cuBLASLt cannot take the product that way: another
// dtype than f32, f64, f16 or bf16, more than two dimensions, an empty
// product, or an operand or output with no unit stride. f16 and bf16 accumulate in f32; f32
// products are full f32 (no TF32).
std::shared_ptr<const GemmPlan> plan_gemm(int device, const Layout& a, const Layout& b,
                                          const Layout& c);

// Queues the product on the plan's device's stream. The pointers are the
// operands' first elements.
void run_gemm(const GemmPlan& plan, const void* a, const void* b, void* c);

}  // namespace nf::cuda
