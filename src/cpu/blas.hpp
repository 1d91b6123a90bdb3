// The BLAS behind the CPU backend's f32 and f64 products: OpenBLAS, loaded by
// name when the first product runs, so that numfuse, not the CPU model table
// of whichever OpenBLAS is installed, decides which kernels it runs
// (blas.cpp says why).
#pragma once

#include <string>

namespace nf::cpu {

struct Blas {
  // CBLAS's values for the arguments numfuse passes.
  static constexpr int row_major = 101, no_trans = 111, trans = 112;
  using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const float* a, int lda, const float* b, int ldb, float beta, float* c,
                         int ldc);
  using Dgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                         const double* a, int lda, const double* b, int ldb, double beta, double* c,
                         int ldc);
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  std::string library;    // the file loaded
  std::string version;    // e.g. "OpenBLAS 0.3.21"
  std::string kernels;    // OpenBLAS's name for them, e.g. "SkylakeX"
  std::string chosen_by;  // who named the kernels
  int threads = 0;        // OpenBLAS's own, per call
  bool tiled = false;     // numfuse's pool runs tiles of each product, one thread per call
};

// OpenBLAS, loaded on the first call and set to one thread per call, unless
// OPENBLAS_NUM_THREADS says otherwise. Throws nf::Error naming the libraries
// tried when none loads.
const Blas& blas();

}  // namespace nf::cpu
