// Types that generated kernels pass and load; device code only.
#pragma once

// A shape or the strides of one array over a kernel's domain, passed by value.
template <class I, int R>
struct nf_dims {
  I d[R];
};

// A domain's dims with, for each, what divides by it without a division
// instruction: x / d[k] == (mulhi(x, m[k]) + x) >> s[k] for every index x
// (Granlund and Montgomery; the host computes m and s, fast_division.cpp).
template <class I, int R>
struct nf_walk_dims {
  I d[R];
  I m[R];
  I s[R];
};

template <class I>
struct nf_unsigned;
template <>
struct nf_unsigned<int> {
  typedef unsigned type;
};
template <>
struct nf_unsigned<long long> {
  typedef unsigned long long type;
};
__device__ __forceinline__ unsigned nf_mulhi(unsigned x, unsigned m) {
  return __umulhi(x, m);
}
__device__ __forceinline__ unsigned long long nf_mulhi(unsigned long long x, unsigned long long m) {
  return __umul64hi(x, m);
}

// The coordinate of index x along dim k (x % d[k]); x becomes x / d[k]. The
// sum cannot overflow: indices are below 2^31 (2^63), the product's high
// half below x.
template <class I, int R>
__device__ __forceinline__ I nf_coordinate(const nf_walk_dims<I, R>& w, int k, I& x) {
  typedef typename nf_unsigned<I>::type U;
  const I q = (I)((nf_mulhi((U)x, (U)w.m[k]) + (U)x) >> w.s[k]);
  const I c = x - q * w.d[k];
  x = q;
  return c;
}

// Covered rows: the offset of run q's first element, the runs being the
// reduced dims `w` but the innermost (whose coordinate is the vector of the
// run), in an operand with strides `st` over the reduced dims.
template <class I, int R>
__device__ __forceinline__ I nf_run_offset(const nf_walk_dims<I, R>& w, const nf_dims<I, R>& st,
                                           I q) {
  I offset = 0;
#pragma unroll
  for (int k = R - 2; k > 0; --k) offset += nf_coordinate(w, k, q) * st.d[k];
  return offset + q * st.d[0];
}

// The offset of element r of a reduction's reduced dims `w` (outer to inner,
// at least two) in an operand with strides `st` over them: its coordinates,
// each without a division, times the strides.
template <class I, int R>
__device__ __forceinline__ I nf_reduced_offset(const nf_walk_dims<I, R>& w, const nf_dims<I, R>& st,
                                               I r) {
  const I inner = nf_coordinate(w, R - 1, r);
  return inner * st.d[R - 1] + nf_run_offset(w, st, r);
}

// Whether 0 <= i < n, in one unsigned comparison.
template <class I>
__device__ __forceinline__ bool nf_within(I i, I n) {
  typedef typename nf_unsigned<I>::type U;
  return (U)i < (U)n;
}

// N elements moved by one load or store (16 bytes for the widest dtype).
template <class T, int N>
struct __align__(sizeof(T) * N) nf_vec {
  T v[N];
};

// Stores a whole vector with one instruction. Where the address is found at
// run time (a shifted row's groups start `head` elements in), NVVM stored the
// first group of 2-byte lanes a lane or two at a time, eight stores for one
// of 16 bytes, whatever the pointer's type or alignment hint said, and the
// shifted rows of halves broadcast back ran L2-bound (bench/RESULTS.md). No
// "memory" clobber: the kernels' arrays are __restrict__, no thread reads
// what it stored, and the loads of later groups may still move ahead of it.
template <class T, int N>
__device__ __forceinline__ void nf_store_vector(nf_vec<T, N>* p, const nf_vec<T, N>& v) {
#if !defined(NF_EMULATOR)
  if constexpr (sizeof(v) == 16) {
    unsigned u[4];
    memcpy(u, &v, sizeof u);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u[0]), "r"(u[1]),
                 "r"(u[2]), "r"(u[3]));
    return;
  }
#endif
  *p = v;
}

// On sm_90 and later numfuse launches a kernel before the kernel ahead of it
// in the stream has finished (programmatic dependent launch), so that its
// launch and the placing of its blocks overlap that kernel's last blocks
// (src/cuda/kernels.cpp). Every generated kernel calls this first, before it
// touches global memory: it returns once the kernels ahead have finished and
// their writes are visible. After an ordinary launch it returns at once.
__device__ __forceinline__ void nf_wait_for_earlier_kernels() {
#if __CUDA_ARCH__ >= 900 && !defined(NF_EMULATOR)
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
