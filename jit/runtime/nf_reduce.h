// What reduction kernels combine: accumulators, their identities and the
// exchange of partial results between the threads that share a row. Results
// are deterministic: every combination happens in an order fixed by the
// launch shape, never by timing.
#pragma once

#include "nf_cast.h"
#include "nf_ops.h"

// The identities of min and max: the far ends of a type's range.
template <class T>
struct nf_range {
  static NF_HD T lowest() { return nf_int_limits<T>::min(); }
  static NF_HD T highest() { return nf_int_limits<T>::max(); }
};
template <>
struct nf_range<nf_b8> {
  static NF_HD nf_b8 lowest() { return false; }
  static NF_HD nf_b8 highest() { return true; }
};
template <>
struct nf_range<nf_f32> {
  static NF_HD nf_f32 lowest() { return -nf_bits_float(0x7f800000u); }
  static NF_HD nf_f32 highest() { return nf_bits_float(0x7f800000u); }
};
template <>
struct nf_range<nf_f64> {
  static NF_HD nf_f64 lowest() { return -nf_bits_double(0x7ff0000000000000ull); }
  static NF_HD nf_f64 highest() { return nf_bits_double(0x7ff0000000000000ull); }
};

// argmin/argmax: a value and its index along the reduced axes; index -1
// holds nothing yet.
template <class T>
struct nf_arg {
  T value;
  long long index;
};

// Whether b beats a: NaN beats numbers, as in numpy; ties go to the first
// index. The rule compares indices, so partials combine in any order.
template <class T, bool Max>
NF_HD bool nf_arg_beats(const nf_arg<T>& b, const nf_arg<T>& a) {
  if (b.index < 0) return false;
  if (a.index < 0) return true;
  const bool bn = b.value != b.value, an = a.value != a.value;
  if (bn || an) return bn && (!an || b.index < a.index);
  if (b.value == a.value) return b.index < a.index;
  return Max ? b.value > a.value : b.value < a.value;
}

// ---- The terms reductions accumulate -----------------------------------------
// Each is a monoid over its accumulator type acc<T>, T the compute type of
// the elements: an identity, and a combination of two partial results
// (operator(), associative, so that threads, blocks and the CPU backend's
// parts combine in whatever fixed order their walk has). accumulate takes
// element x, at index r along the reduced axes, into a partial result; a
// deviation takes x from a centre, a per-output value of the pass before.
// The generated kernels and the CPU backend (src/cpu/reduce.cpp) both
// accumulate through these; the op table (src/graph/ops.def) says which
// terms each reduction takes and how it finishes.
struct nf_sum_term {
  template <class T>
  using acc = T;
  template <class T>
  static NF_HD T identity() {
    return T(0);
  }
  template <class A>
  NF_HD A operator()(A a, A b) const {
    return nf_add(a, b);
  }
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long) {
    return nf_add(a, x);
  }
};
// Products of floating values accumulate in f64. In f32, partial products
// hovering about 1 round near-ties the same way again and again: products of
// 2^24 and more factors near 1, taken in many partial products, came out 2-3%
// low on an H200 (tests/gpu/test_reductions.cpp's "every op x dtype x axes").
template <class T>
struct nf_product_type {
  typedef T type;
};
template <>
struct nf_product_type<nf_f32> {
  typedef nf_f64 type;
};
struct nf_prod_term {
  template <class T>
  using acc = typename nf_product_type<T>::type;
  template <class T>
  static NF_HD acc<T> identity() {
    return acc<T>(1);
  }
  template <class A>
  NF_HD A operator()(A a, A b) const {
    return nf_multiply(a, b);
  }
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long) {
    return nf_multiply(a, nf_convert<A>(x));
  }
};
struct nf_min_term {
  template <class T>
  using acc = T;
  template <class T>
  static NF_HD T identity() {
    return nf_range<T>::highest();
  }
  template <class A>
  NF_HD A operator()(A a, A b) const {
    return nf_minimum(a, b);
  }
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long) {
    return nf_minimum(a, x);
  }
};
struct nf_max_term {
  template <class T>
  using acc = T;
  template <class T>
  static NF_HD T identity() {
    return nf_range<T>::lowest();
  }
  template <class A>
  NF_HD A operator()(A a, A b) const {
    return nf_maximum(a, b);
  }
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long) {
    return nf_maximum(a, x);
  }
};
struct nf_any_term {
  template <class T>
  using acc = nf_b8;
  template <class T>
  static NF_HD nf_b8 identity() {
    return false;
  }
  NF_HD nf_b8 operator()(nf_b8 a, nf_b8 b) const { return a || b; }
  template <class T>
  static NF_HD nf_b8 accumulate(nf_b8 a, T x, long long) {
    return a || x;
  }
};
struct nf_all_term {
  template <class T>
  using acc = nf_b8;
  template <class T>
  static NF_HD nf_b8 identity() {
    return true;
  }
  NF_HD nf_b8 operator()(nf_b8 a, nf_b8 b) const { return a && b; }
  template <class T>
  static NF_HD nf_b8 accumulate(nf_b8 a, T x, long long) {
    return a && x;
  }
};
template <bool Max>
struct nf_arg_term {
  template <class T>
  using acc = nf_arg<T>;
  template <class T>
  static NF_HD nf_arg<T> identity() {
    return nf_arg<T>{T(0), -1};
  }
  template <class T>
  NF_HD nf_arg<T> operator()(const nf_arg<T>& a, const nf_arg<T>& b) const {
    return nf_arg_beats<T, Max>(b, a) ? b : a;
  }
  template <class T>
  static NF_HD nf_arg<T> accumulate(const nf_arg<T>& a, T x, long long r) {
    return nf_arg_term()(a, nf_arg<T>{x, r});
  }
};
typedef nf_arg_term<false> nf_argmin_term;
typedef nf_arg_term<true> nf_argmax_term;
// The sums of d = x - centre and of d^2 (var, std). The centre is the
// mean of a pass before where a walk holds its elements (a second pass reads
// no memory), else the mean of the output's first few elements, taken in the
// same pass. Either way the variance is (q - s^2 / n) / (n - ddof): about
// the mean, s corrects the mean's rounding (an f32 mean of values near 1e4
// with a spread of 1e-2 is off by up to a twentieth of that spread); about a
// mean c of data points, (c - mean)^2 <= n var bounds the loss to
// cancellation by n + 1, where the unshifted sums of x and x^2 lose without
// bound. Partial results combine by addition, as cheaply as sums.
template <class T>
struct nf_moments {
  T s;  // the sum of x - centre
  T q;  // the sum of (x - centre)^2
};
struct nf_moments_term {
  template <class T>
  using acc = nf_moments<T>;
  template <class T>
  static NF_HD nf_moments<T> identity() {
    return {T(0), T(0)};
  }
  template <class T>
  NF_HD nf_moments<T> operator()(const nf_moments<T>& a, const nf_moments<T>& b) const {
    return {nf_add(a.s, b.s), nf_add(a.q, b.q)};
  }
  template <class T>
  static NF_HD nf_moments<T> accumulate(const nf_moments<T>& a, T x, long long, T centre) {
    const T d = nf_subtract(x, centre);
    return {nf_add(a.s, d), nf_add(a.q, nf_square(d))};
  }
};
// The sum of exp(x - centre) (logsumexp: the centre is the maximum).
struct nf_exp_deviation_term : nf_sum_term {
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long, T centre) {
    return nf_add(a, nf_exp(nf_subtract(x, centre)));
  }
};
// Sums of x^2 (norm).
struct nf_sum_of_squares_term : nf_sum_term {
  template <class A, class T>
  static NF_HD A accumulate(A a, T x, long long) {
    return nf_add(a, nf_square(x));
  }
};

// Two terms' accumulators that meet together (ReduceKernel::combine), and
// their combination.
template <class A, class B>
struct nf_pair {
  A a;
  B b;
};
template <class OpA, class OpB>
struct nf_pair_op {
  template <class A, class B>
  NF_HD nf_pair<A, B> operator()(const nf_pair<A, B>& x, const nf_pair<A, B>& y) const {
    return {OpA()(x.a, y.a), OpB()(x.b, y.b)};
  }
};

// ---- Finishing -----------------------------------------------------------------
// A reduction's result from its terms' partial results over all its
// elements, their count n and ddof (var, std), before its conversion to the
// result's dtype.
template <class P>
NF_HD P nf_finish_value(P p, long long, int) {
  return p;
}
template <class T>
NF_HD long long nf_finish_index(const nf_arg<T>& p, long long, int) {
  return p.index;
}
template <class P>
NF_HD P nf_finish_mean(P p, long long n, int) {
  return p / (P)n;
}
template <class P>
NF_HD P nf_finish_var(P, const nf_moments<P>& m, long long n, int ddof) {
  return (m.q - m.s * m.s / (P)n) / (P)(n > ddof ? n - ddof : 0);
}
template <class P>
NF_HD P nf_finish_std(P sum, const nf_moments<P>& m, long long n, int ddof) {
  return nf_sqrt(nf_finish_var(sum, m, n, ddof));
}
// Of a floating sum only (the CPU backend makes a finish where it is well
// formed): norms of integers are taken in f64.
template <class P>
NF_HD auto nf_finish_sqrt(P p, long long, int) -> decltype(nf_sqrt(p)) {
  return nf_sqrt(p);
}
// logsumexp from the maximum m and the sum s of exp(x - m): m itself where
// it is not a number or infinite (no element, an infinite element).
template <class P>
NF_HD P nf_finish_logsumexp(P m, P s, long long, int) {
  if (m != m || m == nf_range<P>::highest() || m == nf_range<P>::lowest()) return m;
  return m + nf_log(s);
}

// a / b for the many a of one output and its one b (softmax's
// exp(x - max) / sum), with one reciprocal per output rather than a division
// per element. The divisor is first scaled by a power of two into
// [2^-64, 2^64], exactly, and each a by the same power. Then q = a * r is
// within an ulp of a / b, and one correction by the residual a - q * b (an
// FMA) gives the correctly rounded quotient (Markstein's theorem) wherever
// the quotient is a normal number and the scaled a is at least 2^-100, so
// that the residual is exact; elsewhere it is within an ulp
// (tests/cpu/test_divide_by.cpp). Where the correction is not a number
// (a infinite or not a number; b zero, infinite or not a number), q is the
// quotient already. No branch per element: a range test and branch per
// element took a seventh of the instructions of softmax's kernel
// (bench/RESULTS.md).
NF_HD nf_f32 nf_fma(nf_f32 a, nf_f32 b, nf_f32 c) {
  return fmaf(a, b, c);
}
NF_HD nf_f64 nf_fma(nf_f64 a, nf_f64 b, nf_f64 c) {
  return fma(a, b, c);
}
NF_HD nf_f32 nf_copysign(nf_f32 a, nf_f32 b) {
  return copysignf(a, b);
}
NF_HD nf_f64 nf_copysign(nf_f64 a, nf_f64 b) {
  return copysign(a, b);
}
template <class T>
struct nf_divisor {
  T b;      // the divisor, scaled
  T r;      // 1 / b, rounded
  T scale;  // the power of two b was scaled by
};
template <class T>
NF_HD nf_divisor<T> nf_divisor_of(T b) {
  const T m = b < (T)0 ? -b : b;
  const T scale = m < (T)0x1p-64 ? (T)0x1p64 : m > (T)0x1p64 ? (T)0x1p-64 : (T)1;
  const T scaled = b * scale;
  return {scaled, (T)1 / scaled, scale};
}
template <class T>
NF_HD T nf_divide_by(T a, nf_divisor<T> d) {
  a = a * d.scale;  // exact, unless the quotient leaves the range too
  const T q = a * d.r;
  // The correction is below an ulp of q, so the quotient has q's sign (also
  // a zero's, which the sum of the correction would lose).
  const T c = nf_copysign(nf_fma(nf_fma(-q, d.b, a), d.r, q), q);
  return c == c ? c : q;
}

#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)

// Lane exchange of every accumulator type.
template <class T>
__device__ __forceinline__ T nf_shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <>
__device__ __forceinline__ nf_b8 nf_shfl_xor(nf_b8 v, int mask) {
  return __shfl_xor_sync(0xffffffffu, (int)v, mask) != 0;
}
template <>
__device__ __forceinline__ nf_u8 nf_shfl_xor(nf_u8 v, int mask) {
  return (nf_u8)__shfl_xor_sync(0xffffffffu, (int)v, mask);
}
template <class T>
__device__ __forceinline__ nf_arg<T> nf_shfl_xor(nf_arg<T> v, int mask) {
  return {nf_shfl_xor(v.value, mask), nf_shfl_xor(v.index, mask)};
}
template <class T>
__device__ __forceinline__ nf_moments<T> nf_shfl_xor(nf_moments<T> v, int mask) {
  return {nf_shfl_xor(v.s, mask), nf_shfl_xor(v.q, mask)};
}
template <class A, class B>
__device__ __forceinline__ nf_pair<A, B> nf_shfl_xor(nf_pair<A, B> v, int mask) {
  return {nf_shfl_xor(v.a, mask), nf_shfl_xor(v.b, mask)};
}

// Rows of TR consecutive threads (TR a power of two): every thread of a row
// gets the row's combination. Lanes exchange by butterfly; the warps of a
// long row meet in shared memory, combined by butterfly again. Every thread of
// the block calls it. Consecutive calls take turns between two `smem`
// buffers, so that no barrier is needed after the reads: a thread that
// writes a buffer again has passed the next call's barrier, which every
// reader of this call reached after reading.
template <int TR, class T, class Op>
__device__ __forceinline__ T nf_row_allreduce(T v, Op op, void* smem) {
  for (int m = (TR < 32 ? TR : 32) / 2; m > 0; m /= 2) v = op(v, nf_shfl_xor(v, m));
  if (TR <= 32) return v;
  constexpr int W = TR > 32 ? TR / 32 : 1;
  T* s = (T*)smem;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) s[warp] = v;
  __syncthreads();
  // Every warp of the row combines the row's W partials by butterfly, each
  // group of W lanes holding them all: a load and log2(W) steps a thread,
  // rather than W loads and W - 1 steps.
  v = s[warp / W * W + threadIdx.x % W];
  for (int m = W / 2; m > 0; m /= 2) v = op(v, nf_shfl_xor(v, m));
  return v;
}

// The K blocks of a cluster (sm_90) sharing one output: each block's
// combination meets the others' through distributed shared memory, combined
// in rank order, so that every block gets the same bits. `slot`: 16 bytes of
// this block's shared memory. Every thread of the cluster calls it; the
// second barrier keeps a slot from being overwritten, and its block from
// exiting, while another block still reads it.
template <int K, class T, class Op>
__device__ __forceinline__ T nf_cluster_allreduce(T v, Op op, void* slot) {
  if (threadIdx.x == 0) *(T*)slot = v;
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  v = *(const T*)__cluster_map_shared_rank(slot, 0);
  for (int b = 1; b < K; ++b) v = op(v, *(const T*)__cluster_map_shared_rank(slot, b));
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  return v;
}

// The K blocks of a cluster sharing the TO columns of a block (each holds a
// part of every column): after the block's own meeting, where every thread
// of output t % TO holds its value, the blocks' values meet through
// distributed shared memory, combined in rank order as in
// nf_cluster_allreduce. `slots`: TO slots of 16 bytes of this block's
// shared memory.
template <int K, int TO, class T, class Op>
__device__ __forceinline__ T nf_cluster_column_allreduce(T v, Op op, void* slots) {
  const int o = threadIdx.x % TO;
  if (threadIdx.x < TO) ((T*)slots)[o] = v;
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  v = ((const T*)__cluster_map_shared_rank(slots, 0))[o];
  for (int b = 1; b < K; ++b) v = op(v, ((const T*)__cluster_map_shared_rank(slots, b))[o]);
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
  return v;
}

// cp.async copies 4 bytes at the least: a 1- or 2-byte element is copied in
// the aligned word that holds it (device buffers are whole words), and taken
// out of it by its address's low bits (little-endian).
template <class T>
NF_HD const void* nf_word_of(const T* p) {
  return (const void*)((unsigned long long)p & ~3ull);
}
template <class T>
NF_HD T nf_from_word(unsigned int word, const T* p) {
  return (T)(word >> (((unsigned int)(unsigned long long)p & 3u) * 8u));
}

// Columns of pairs (ReduceSpec::pairs): a thread reads the 4-byte word
// that holds its two outputs' 2-byte elements, `first` the first's (on 4
// bytes), and takes each element's bits out of it (little-endian).
NF_HD unsigned int nf_pair_word(const unsigned short* first) {
  return *(const unsigned int*)first;
}
NF_HD unsigned short nf_pair_element(unsigned int word, int second) {
  return (unsigned short)(word >> (second * 16));
}

// A staged row of shared columns: the 16-byte units from the one around the
// element of the block's first output. The thread's element `at`, `lane`
// outputs on, lies as far into them as that first element's address is past
// a multiple of 16, and `lane` elements more.
template <class T>
NF_HD T nf_staged(const unsigned char* row, const T* at, int lane) {
  return *(const T*)(row + ((unsigned long long)(at - lane) & 15ull) + lane * sizeof(T));
}

// A block that loops over several rows copies the next rows' elements into
// shared memory while it works on the current ones (cp.async, sm_80), so
// that its SM keeps reading memory through the row's reductions. The test
// emulator defines these for host threads.
#ifndef NF_EMULATOR
#define NF_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
// Starts copying Bytes (4, 8 or 16) from global to shared memory.
template <int Bytes>
__device__ __forceinline__ void nf_fetch(void* shared, const void* global) {
  const unsigned to = (unsigned)__cvta_generic_to_shared(shared);
  if (Bytes == 16) {
    // Whole 16-byte lines bypass L1: the elements are read once.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(global) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(global), "n"(Bytes)
                 : "memory");
  }
}
// Waits for the thread's copies: their bytes are then in shared memory.
__device__ __forceinline__ void nf_fetched() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
#endif

// Columns: thread t works for output t % TO and TR threads share an output.
// Blocks are whole warps. Where a warp holds L threads of an output (TO <
// 32, a narrow array's whole rows), they combine by shuffles first; the
// TR / L partials left of each output meet in shared memory, combined in
// thread order. Buffers take turns as in nf_row_allreduce.
template <int TO, int TR, class T, class Op>
__device__ __forceinline__ T nf_column_allreduce(T v, Op op, void* smem) {
  constexpr int L = TO >= 32 ? 1 : 32 / TO;
  for (int m = TO; m < TO * L; m *= 2) v = op(v, nf_shfl_xor(v, m));
  if (L == TR) return v;
  T* s = (T*)smem;
  const int o = threadIdx.x % TO;
  if (threadIdx.x / TO % L == 0) s[threadIdx.x / TO / L * TO + o] = v;
  __syncthreads();
  v = s[o];
  for (int t = 1; t < TR / L; ++t) v = op(v, s[t * TO + o]);
  return v;
}

#endif
