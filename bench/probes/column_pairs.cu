// Probe, not a numfuse kernel: sum(x, 1) of an A x R x C array of halves
// (A = 1: sum(x, 0)) by the kernel numfuse generates for columns that a
// thread reads an element at a time (the streamed columns walk: a block of
// 32 consecutive outputs, 8 threads of each output striding over its rows,
// meeting through shared memory), against the same kernel with a thread on
// two consecutive outputs reading the 4-byte word that holds both
// (`pairs`). A warp's load reads 64 bytes of a row in the first and 128 in
// the second, as numfuse's f32 columns do; the question is whether halves
// then read as fast as floats. Floats of the same shape are timed too.
// C is even in `pairs` (each row starts on 4 bytes).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/column_pairs bench/probes/column_pairs.cu
//   /tmp/column_pairs [f16|f32 A R C]
//
// Figures: bench/RESULTS.md, "Columns of halves read two outputs a thread".
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_util.cuh"

namespace {

constexpr int kTr = 8;   // threads of an output
constexpr int kTo = 32;  // outputs (or pairs) of a block

// V = 1: a thread an output; V = 2: a thread on two outputs, one word a row.
template <class T, int V>
__global__ void __launch_bounds__(256)
    column_sums(float* __restrict__ out, const T* __restrict__ in, int A, int R, int C) {
  __shared__ float part[kTr][kTo][V];
  const int tr = threadIdx.x / kTo, lane = threadIdx.x % kTo;
  const long o = (long(blockIdx.x) * kTo + lane) * V;  // first output, over A x C
  const bool live = o < long(A) * C;
  const long a = live ? o / C : 0, c = live ? o % C : 0;
  const T* p = in + a * long(R) * C + c;
  float acc[V] = {};
  if (live) {
    for (int r = tr; r < R; r += kTr) {
      if constexpr (V == 1) {
        acc[0] += tof(p[long(r) * C]);
      } else {
        const __half2 w = *reinterpret_cast<const __half2*>(p + long(r) * C);
        const float2 f = __half22float2(w);
        acc[0] += f.x;
        acc[1] += f.y;
      }
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) part[tr][lane][j] = acc[j];
  __syncthreads();
  if (tr == 0 && live) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float s = 0;
#pragma unroll
      for (int t = 0; t < kTr; ++t) s += part[t][lane][j];
      out[o + j] = s;
    }
  }
}

template <class T, int V>
void time_sums(float* out, const T* in, int A, int R, int C, float copy_us,
               const std::vector<double>& want, const char* name) {
  const long groups = (long(A) * C + V - 1) / V;
  const unsigned blocks = unsigned((groups + kTo - 1) / kTo);
  const auto launch = [&] { column_sums<T, V><<<blocks, kTr * kTo>>>(out, in, A, R, C); };
  const float us = median_us(launch);
  const double bad = max_rel_error(launch, out, want);
  printf("  %-9s blocks %6u  %8.2f us  %5.1f%% of a read at copy speed  rel error %.2g\n", name,
         blocks, us, 100.0 * copy_us / 2 / us, bad);
}

template <class T>
void run(int A, int R, int C) {
  const SumsCase<T> x(A, R, C);
  x.print_copy();
  time_sums<T, 1>(x.out, x.in, A, R, C, x.copy_us, x.want, "elements");
  if constexpr (sizeof(T) == 2) {
    if (C % 2 == 0) time_sums<T, 2>(x.out, x.in, A, R, C, x.copy_us, x.want, "pairs");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto run_any = [](bool half, int A, int R, int C) {
    half ? run<__half>(A, R, C) : run<float>(A, R, C);
  };
  return probe_main3(argc, argv, run_any,
                     {
                         {true, 76, 76, 5776},    // (76, 76, 76, 76) over axis 1
                         {false, 76, 76, 5776},   // the same in floats, twice the bytes
                         {true, 1, 76, 438976},   // over axis 0
                         {true, 75, 75, 5626},    // (75, 75, 75, 75) over axis 1, C made even
                         {true, 1, 323, 104330},  // (323, 323, 323) over axis 0, C made even
                         {true, 1, 8, 4194304},   // (8, 4194304) over axis 0
                         {true, 1, 5792, 5792},   // (5792, 5792) over axis 0
                         {true, 22, 28061, 54},   // (22, 28061, 54) over axis 1
                         {true, 27, 119, 10404},  // (27, 119, 102, 102) over axis 1
                         {false, 64, 64, 4096},   // (64, 64, 64, 64) f32 over axis 1
                         {true, 64, 64, 4096},    // the same in halves
                     });
}
