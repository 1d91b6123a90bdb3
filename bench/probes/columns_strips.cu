// Probe, not a numfuse kernel: x - mean(x, 1) of an A x R x C array (A = 1:
// x - mean(x, 0)) where one block holds a strip of W columns of all R rows
// of one a. Each row's W elements are copied in the 16-byte units that
// cover them (cp.async, all in flight), each column is reduced there, and
// the results are stored an element a thread: a block a strip
// (`elements`), or persistent blocks that copy the next strip in while they
// reduce and store this one (`pipelined`). It asks how wide a strip must
// be, and whether overlapping a block's copies with its stores pays, for
// columns one block holds. (Stores from the staged units, a unit at a time,
// ran slower than elements on every shape: 27-75% of copy.)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/columns_strips bench/probes/columns_strips.cu
//   /tmp/columns_strips [f16|f32 A R C]
//
// Figures: bench/RESULTS.md, "Strips of columns one block holds".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_util.cuh"

namespace {

constexpr int kThreads = 256;

// A strip: W columns, from c0, of all R rows of one a. Staged, row r's
// elements lie `lead(r)` elements into its U units of V elements in shared
// memory.
template <class T, int W>
struct Strip {
  static constexpr int V = 16 / sizeof(T);  // elements of a unit
  static constexpr int U = W / V + 1;       // units of a row, at most
  static constexpr int TR = kThreads / W;   // threads of a column
  int R, C, c0, c1;
  long first;  // element (a, 0, c0)

  __device__ Strip(long strip, int rows, int cols, int tiles)
      : R(rows),
        C(cols),
        c0(int(strip % tiles) * W),
        c1(min(cols, c0 + W)),
        first(strip / tiles * rows * cols + c0) {}
  __device__ int lead(int r) const { return int((first + long(r) * C) % V); }

  // Starts copying each row's units into `s` (cp.async, not committed).
  __device__ void stage(T* s, const T* in) const {
    for (int i = threadIdx.x; i < R * U; i += kThreads) {
      const int r = i / U, k = i % U;
      const long e0 = first + long(r) * C - lead(r);  // the first unit's first element
      if (e0 + long(k) * V < first + long(r) * C + (c1 - c0)) {
        fetch16(&s[(r * U + k) * V], &in[e0 + long(k) * V]);
      }
    }
  }
  // Once `s` holds the strip: each column's mean, and x - mean stored an
  // element a thread.
  __device__ void reduce_and_store(T* out, const T* s, float* red, float* mean) const {
    const int o = threadIdx.x % W, tr = threadIdx.x / W;
    float v = 0;
    if (c0 + o < c1) {
      for (int r = tr; r < R; r += TR) v += tof(s[r * U * V + lead(r) + o]);
    }
    red[threadIdx.x] = v;
    __syncthreads();
    if (tr == 0) {
      float sum = 0;
      for (int t = 0; t < TR; ++t) sum += red[t * W + o];
      mean[o] = sum / R;
    }
    __syncthreads();
    const float m = mean[o];
    if (c0 + o < c1) {
      for (int r = tr; r < R; r += TR) {
        out[first + long(r) * C + o] = fromf<T>(tof(s[r * U * V + lead(r) + o]) - m);
      }
    }
  }
};

template <class T, int W>
__global__ void __launch_bounds__(kThreads) strips(T* out, const T* in, int R, int C, int tiles) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[kThreads];
  __shared__ float mean[W];
  const Strip<T, W> strip(blockIdx.x, R, C, tiles);
  strip.stage((T*)sm, in);
  fetched();
  __syncthreads();
  strip.reduce_and_store(out, (const T*)sm, red, mean);
}

// Persistent blocks over the strips, two buffers deep: the next strip's
// copies are in flight while this one is reduced and stored (elements).
template <class T, int W>
__global__ void __launch_bounds__(kThreads)
    pipelined(T* out, const T* in, int R, int C, int tiles, long strips_in_all) {
  extern __shared__ __align__(16) unsigned char sm[];
  __shared__ float red[kThreads];
  __shared__ float mean[W];
  const int held = R * Strip<T, W>::U * Strip<T, W>::V;  // elements of a buffer
  long strip = blockIdx.x;
  int buf = 0;
  if (strip < strips_in_all) {
    Strip<T, W>(strip, R, C, tiles).stage((T*)sm, in);
    commit();
  }
  for (; strip < strips_in_all; strip += gridDim.x, buf ^= 1) {
    T* s = (T*)sm + buf * held;
    if (strip + gridDim.x < strips_in_all) {
      Strip<T, W>(strip + gridDim.x, R, C, tiles).stage((T*)sm + (buf ^ 1) * held, in);
      commit();
      all_but_last_arrived<1>();
    } else {
      fetched();
    }
    __syncthreads();
    Strip<T, W>(strip, R, C, tiles).reduce_and_store(out, s, red, mean);
    __syncthreads();  // the buffer is staged into again next strip but one
  }
}

template <class T, int W>
void time_pipelined(T* out, const T* in, int A, int R, int C, float copy_us) {
  const int tiles = (C + W - 1) / W;
  const int smem = 2 * R * Strip<T, W>::U * 16;
  if (smem > 227 * 1024) return;
  CK(cudaFuncSetAttribute(pipelined<T, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pipelined<T, W>, kThreads, smem));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long all = long(A) * tiles;
  const long blocks = std::min<long>(all, long(per_sm) * sms);
  const float us =
      median_us([&] { pipelined<T, W><<<blocks, kThreads, smem>>>(out, in, R, C, tiles, all); });
  printf("  W=%-4d %-8s blocks %7ld (%d an SM) smem %6d  %8.2f us  %5.1f%% of copy\n", W,
         "pipelined", blocks, per_sm, smem, us, 100.0 * copy_us / us);
}

template <class T, int W>
void time_strips(T* out, const T* in, int A, int R, int C, float copy_us) {
  const int tiles = (C + W - 1) / W;
  const int smem = R * Strip<T, W>::U * 16;
  if (smem > 227 * 1024) return;
  CK(cudaFuncSetAttribute(strips<T, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, strips<T, W>, kThreads, smem));
  const long blocks = long(A) * tiles;
  const float us =
      median_us([&] { strips<T, W><<<blocks, kThreads, smem>>>(out, in, R, C, tiles); });
  printf("  W=%-4d %-8s blocks %7ld (%d an SM) smem %6d  %8.2f us  %5.1f%% of copy\n", W,
         "elements", blocks, per_sm, smem, us, 100.0 * copy_us / us);
}

template <class T>
void run(int A, int R, int C) {
  const std::size_t n = std::size_t(A) * R * C, bytes = n * sizeof(T);
  const std::vector<T> h = test_data<T>(n);
  T *in, *out;
  CK(cudaMalloc(&in, bytes + 16));
  CK(cudaMalloc(&out, bytes + 16));
  CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  const float copy = median_us([&] { cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); });
  printf("%s (%d, %d, %d): copy %.2f us\n", sizeof(T) == 2 ? "f16" : "f32", A, R, C, copy);
  // Checks the last variant run against x - mean in double.
  auto check = [&] {
    std::vector<T> got(n);
    CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    double bad = 0;
    for (int a = 0; a < A; a += std::max(1, A / 7)) {
      for (int c = 0; c < C; c += std::max(1, C / 97)) {
        double m = 0;
        for (int r = 0; r < R; ++r) m += float(h[(std::size_t(a) * R + r) * C + c]);
        m /= R;
        for (int r = 0; r < R; ++r) {
          const std::size_t i = (std::size_t(a) * R + r) * C + c;
          bad = std::max(bad, std::abs(double(float(got[i])) - (float(h[i]) - m)));
        }
      }
    }
    printf("  max error %.3g\n", bad);
  };
  time_strips<T, 32>(out, in, A, R, C, copy);
  time_strips<T, 64>(out, in, A, R, C, copy);
  time_strips<T, 128>(out, in, A, R, C, copy);
  time_strips<T, 256>(out, in, A, R, C, copy);
  check();
  time_pipelined<T, 32>(out, in, A, R, C, copy);
  time_pipelined<T, 64>(out, in, A, R, C, copy);
  time_pipelined<T, 128>(out, in, A, R, C, copy);
  check();
  CK(cudaFree(in));
  CK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
  const auto run_any = [](bool half, int A, int R, int C) {
    half ? run<__half>(A, R, C) : run<float>(A, R, C);
  };
  return probe_main3(argc, argv, run_any,
                     {
                         {true, 1, 323, 104329},  // (323, 323, 323) over axis 0
                         {true, 323, 323, 323},   // over axis 1
                         {true, 1, 22, 1515294},  // (22, 28061, 54) over axis 0
                         {true, 75, 75, 5625},    // (75, 75, 75, 75) over axis 1
                         {true, 5625, 75, 75},    // over axis 2
                         {true, 702, 110, 429},   // (27, 26, 110, 429) over axis 2
                         {false, 1, 255, 65025},  // (255, 255, 255) over axis 0
                         {false, 255, 255, 255},  // over axis 1
                         {true, 1, 324, 104976},  // even widths: (324, 324, 324) over axis 0
                     });
}
