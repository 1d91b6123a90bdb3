// Matrix products through cuBLASLt on a device's stream. One handle and one
// workspace a device, made at first use. A product's descriptors are made
// once for its layouts (plan_gemm) and reused by every run of statements with
// the same key; the algorithm cuBLASLt's heuristic picks is cached per shape.
#pragma once

#include <memory>

#include "numfuse/ops.hpp"
#include "plan/memory_layout.hpp"

namespace nf::cuda {

struct GemmPlan;

// What a product computes besides A.B: f32's precision mode, and the
// epilogue cuBLASLt applies before writing (a bias along the last axis of
// the product's dtype, then an activation).
struct GemmOptions {
  MatmulPrecision precision = MatmulPrecision::f32;
  bool bias = false;
  Activation activation = Activation::none;
};

// C (..., m x n) = A (..., m x k) . B (..., k x n), all of dtype `t`, row-major
// as numpy sees them, with the batch axes of A and B broadcast to C's. Each is
// read where it lies: an operand with a unit stride along either matrix axis
// is a layout cuBLASLt reads without a copy (a transposed view included); the
// batch is one strided-batched call where the batch axes merge into one
// stride, else a call per outer index. Null where cuBLASLt cannot take the
// product that way: another dtype than f32, f64, f16 or bf16, an empty
// product, or an operand or output with no unit stride. f16 and bf16
// accumulate in f32.
std::shared_ptr<const GemmPlan> plan_gemm(int device, const Layout& a, const Layout& b,
                                          const Layout& c, const GemmOptions& options);

// Queues the product on the plan's device's stream. The pointers are the
// operands' first elements; `bias` is null unless the plan has a bias.
void run_gemm(const GemmPlan& plan, const void* a, const void* b, void* c, const void* bias);

}  // namespace nf::cuda
