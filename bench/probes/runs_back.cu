// Probe: x - mean(x, (k, 3)) of a rank-4 array, whose outputs' elements lie
// in runs of the last axis, one run a step of axis k (0 or 1). torch.compile
// runs it as one Triton kernel that beats numfuse's three kernels, and
// numfuse's own one-kernel walks of the same shape are slower than both
// (bench/RESULTS.md, "Reductions broadcast back over runs against
// torch.compile", 2026-11-29). Each variant here is one kernel, a block of
// 512 threads an output, moving from Triton's kernel to numfuse's held rows a
// step at a time, so that the step that costs shows:
//
//   loop      Triton's: chunks of 2048 elements, four consecutive a thread,
//             read once to sum and again (from L2) to store x - mean
//   loop-hint the same, the first read kept in L2 (evict_last), the second
//             let go first (evict_first), as Triton's loads ask
//   held-4    every element read once into registers, four consecutive a
//             thread a chunk (Triton's order), then stored from them
//   held-1    the same, a thread's elements 512 apart (numfuse's held rows)
//   carry-4   loop's order, a thread's coordinates stepped with a carry
//             rather than divided for each element
//   carry-1   held-1's order, coordinates stepped with a carry
//   lanes     a thread keeps one position d in the runs and steps through
//             runs, 512 / D of them at a time: an element's address is one
//             addition from the last (lanes past the last whole run idle)
//
// Each result is checked against a host reference in double. CUDA-event
// time per call, and its share of a copy of the array (one read and one
// write, the bound of a slice that fits on chip).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/runs_back bench/probes/runs_back.cu && /tmp/runs_back
#include <cstdint>
#include <string>

#include "probe_util.cuh"

namespace {

constexpr int kThreads = 512;
constexpr int kChunk = 4 * kThreads;  // elements a block takes a step in the loops
constexpr int kMostHeld = 16;         // held elements a thread, at most (n <= 8192)

// Where output o's element r lies: outputs (p, c) and elements (q, d), with
// p and q the two outer axes in the order the reduction leaves them. C and D
// are template arguments, so that the divisions below are by constants, as
// in Triton's kernel (specialised to the shape) and numfuse's (which divide
// by multiplying): a first run with them read at run time measured the
// divisions more than the walks (bench/RESULTS.md, "The runs-back probe run").
template <int C, int D>
struct Runs {
  std::int64_t kept_outer, kept_inner;  // strides of p and c
  std::int64_t red_outer;               // stride of q (d's is 1)
  int n;                                // elements an output: length of q times D

  __device__ std::int64_t base(int o) const {
    return (o / C) * kept_outer + std::int64_t(o % C) * kept_inner;
  }
  __device__ std::int64_t at(int r) const { return (r / D) * red_outer + r % D; }
};

// Element r's address, stepped: r advances by a constant Step, so q and d
// advance by Step / D and Step % D and d carries into q past D.
template <int D, int Step>
struct Stepper {
  int d;
  std::int64_t a;  // address of element r from the output's base
  __device__ Stepper(int r, std::int64_t red_outer) : d(r % D), a((r / D) * red_outer + r % D) {}
  __device__ void next(std::int64_t red_outer) {
    d += Step % D;
    a += (Step / D) * red_outer + Step % D;
    if (d >= D) {
      d -= D;
      a += red_outer - D;
    }
  }
};

__device__ __forceinline__ float load_evict_last(const __half* p) {
  unsigned short v;
  asm volatile(
      "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      "ld.global.L2::cache_hint.u16 %0, [%1], pol;\n}\n"
      : "=h"(v)
      : "l"(p));
  return __half2float(__ushort_as_half(v));
}
__device__ __forceinline__ float load_evict_first(const __half* p) {
  unsigned short v;
  asm volatile("ld.global.L1::evict_first.u16 %0, [%1];\n" : "=h"(v) : "l"(p));
  return __half2float(__ushort_as_half(v));
}
__device__ __forceinline__ float load_evict_last(const float* p) {
  float v;
  asm volatile(
      "{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      "ld.global.L2::cache_hint.f32 %0, [%1], pol;\n}\n"
      : "=f"(v)
      : "l"(p));
  return v;
}
__device__ __forceinline__ float load_evict_first(const float* p) {
  float v;
  asm volatile("ld.global.L1::evict_first.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}

// The block's sum, in every thread.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = partial[threadIdx.x % (kThreads / 32)];  // lanes 16 to 31 take the same 16
  for (int m = 8; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

template <class T, bool Hint, class G>
__global__ void __launch_bounds__(kThreads) loop(const T* __restrict__ x, T* __restrict__ y, G g) {
  const std::int64_t b = g.base(blockIdx.x);
  float s = 0.f;
  for (int chunk = 0; chunk < g.n; chunk += kChunk) {
    for (int j = 0; j < 4; ++j) {
      const int r = chunk + 4 * threadIdx.x + j;
      if (r < g.n) s += Hint ? load_evict_last(x + b + g.at(r)) : tof(x[b + g.at(r)]);
    }
  }
  const float mean = block_sum(s) / g.n;
  for (int chunk = 0; chunk < g.n; chunk += kChunk) {
    for (int j = 0; j < 4; ++j) {
      const int r = chunk + 4 * threadIdx.x + j;
      if (r < g.n) {
        const std::int64_t a = b + g.at(r);
        y[a] = fromf<T>((Hint ? load_evict_first(x + a) : tof(x[a])) - mean);
      }
    }
  }
}

// Element k of a thread's held ones: consecutive fours a chunk, or 512 apart.
template <bool Fours>
__device__ __forceinline__ int held_index(int k) {
  return Fours ? (k / 4) * kChunk + 4 * threadIdx.x + k % 4 : k * kThreads + threadIdx.x;
}

template <class T, bool Fours, class G>
__global__ void __launch_bounds__(kThreads) held(const T* __restrict__ x, T* __restrict__ y, G g) {
  const std::int64_t b = g.base(blockIdx.x);
  float v[kMostHeld];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k) {
    const int r = held_index<Fours>(k);
    v[k] = r < g.n ? tof(x[b + g.at(r)]) : 0.f;
    s += v[k];
  }
  const float mean = block_sum(s) / g.n;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k) {
    const int r = held_index<Fours>(k);
    if (r < g.n) y[b + g.at(r)] = fromf<T>(v[k] - mean);
  }
}

// loop's order (four consecutive elements a thread a chunk), stepped within
// a chunk's four.
template <class T, int C, int D>
__global__ void __launch_bounds__(kThreads)
    carry4(const T* __restrict__ x, T* __restrict__ y, Runs<C, D> g) {
  const std::int64_t b = g.base(blockIdx.x);
  float s = 0.f;
  for (int chunk = 4 * threadIdx.x; chunk < g.n; chunk += kChunk) {
    Stepper<D, 1> e(chunk, g.red_outer);
    for (int j = 0; j < 4; ++j, e.next(g.red_outer))
      if (chunk + j < g.n) s += tof(x[b + e.a]);
  }
  const float mean = block_sum(s) / g.n;
  for (int chunk = 4 * threadIdx.x; chunk < g.n; chunk += kChunk) {
    Stepper<D, 1> e(chunk, g.red_outer);
    for (int j = 0; j < 4; ++j, e.next(g.red_outer))
      if (chunk + j < g.n) y[b + e.a] = fromf<T>(tof(x[b + e.a]) - mean);
  }
}

// held-1's order, stepped.
template <class T, int C, int D>
__global__ void __launch_bounds__(kThreads)
    carry1(const T* __restrict__ x, T* __restrict__ y, Runs<C, D> g) {
  const std::int64_t b = g.base(blockIdx.x);
  float v[kMostHeld];
  float s = 0.f;
  Stepper<D, kThreads> e(threadIdx.x, g.red_outer);
  const Stepper<D, kThreads> first = e;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k, e.next(g.red_outer)) {
    v[k] = int(threadIdx.x) + k * kThreads < g.n ? tof(x[b + e.a]) : 0.f;
    s += v[k];
  }
  const float mean = block_sum(s) / g.n;
  e = first;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k, e.next(g.red_outer))
    if (int(threadIdx.x) + k * kThreads < g.n) y[b + e.a] = fromf<T>(v[k] - mean);
}

// A thread keeps position d of every run it reads; the block reads 512 / D
// runs a step.
template <class T, int C, int D>
__global__ void __launch_bounds__(kThreads)
    lanes(const T* __restrict__ x, T* __restrict__ y, Runs<C, D> g) {
  constexpr int kRuns = kThreads / D;  // runs a step
  const std::int64_t b = g.base(blockIdx.x);
  const int runs = g.n / D, q0 = threadIdx.x / D, d = threadIdx.x % D;
  const bool lane = q0 < kRuns;
  const T* in = x + b + q0 * g.red_outer + d;
  const std::int64_t step = kRuns * g.red_outer;
  float v[kMostHeld];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k) {
    v[k] = lane && q0 + k * kRuns < runs ? tof(in[k * step]) : 0.f;
    s += v[k];
  }
  const float mean = block_sum(s) / g.n;
  T* out = y + b + q0 * g.red_outer + d;
#pragma unroll
  for (int k = 0; k < kMostHeld; ++k)
    if (lane && q0 + k * kRuns < runs) out[k * step] = fromf<T>(v[k] - mean);
}

template <class T, int C, int D>
void run_case(int A, int B, int axis) {
  const std::size_t n = std::size_t(A) * B * C * D, bytes = n * sizeof(T);
  const std::vector<T> h = test_data<T>(n);
  T *x, *y;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  const float copy_us = median_us([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); });
  const std::int64_t sa = std::int64_t(B) * C * D, sb = std::int64_t(C) * D;
  // axis 1: outputs (a, c), elements (b, d); axis 0: outputs (b, c), elements (a, d).
  const Runs<C, D> g{axis == 1 ? sa : sb, D, axis == 1 ? sb : sa, (axis == 1 ? B : A) * D};
  const int outputs = (axis == 1 ? A : B) * C;
  // The reference: each output's mean in double.
  std::vector<double> mean(outputs, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = i / D % C, b = i / sb % B, a = i / sa;
    mean[(axis == 1 ? a : b) * C + c] += double(float(h[i]));
  }
  for (double& m : mean) m /= g.n;
  const char* type = sizeof(T) == 2 ? "f16" : "f32";
  std::vector<T> got(n);
  const auto report = [&](const char* name, auto launch) {
    CK(cudaMemset(y, 0, bytes));
    launch();
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), y, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t c = i / D % C, b = i / sb % B, a = i / sa;
      const double want = double(float(h[i])) - mean[(axis == 1 ? a : b) * C + c];
      worst = std::max(worst, std::abs(double(float(got[i])) - want));
    }
    const float us = median_us(launch);
    printf("(%d, %d, %d, %d) %s axes (%d, 3)  %-9s %8.1f us  %5.1f%% of copy  max error %.3g\n", A,
           B, C, D, type, axis, name, us, 100 * copy_us / us, worst);
  };
  using G = Runs<C, D>;
  report("loop", [&] { loop<T, false, G><<<outputs, kThreads>>>(x, y, g); });
  report("loop-hint", [&] { loop<T, true, G><<<outputs, kThreads>>>(x, y, g); });
  if (g.n <= kMostHeld * kThreads) {
    report("held-4", [&] { held<T, true, G><<<outputs, kThreads>>>(x, y, g); });
    report("held-1", [&] { held<T, false, G><<<outputs, kThreads>>>(x, y, g); });
    report("carry-1", [&] { carry1<T, C, D><<<outputs, kThreads>>>(x, y, g); });
  }
  report("carry-4", [&] { carry4<T, C, D><<<outputs, kThreads>>>(x, y, g); });
  if (g.n / D <= kMostHeld * (kThreads / D))
    report("lanes", [&] { lanes<T, C, D><<<outputs, kThreads>>>(x, y, g); });
  CK(cudaFree(x));
  CK(cudaFree(y));
}

}  // namespace

int main() {
  for (int axis : {1, 0}) {
    run_case<__half, 75, 75>(75, 75, axis);
    run_case<__half, 76, 76>(76, 76, axis);
    run_case<float, 63, 63>(63, 63, axis);
  }
  run_case<__half, 37, 57>(174, 91, 1);
  run_case<__half, 41, 39>(1297, 16, 1);
  run_case<float, 225, 33>(342, 7, 1);
}
