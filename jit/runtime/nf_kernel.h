// Types that generated kernels pass and load; device code only.
#pragma once

// A shape or the strides of one array over a kernel's domain, passed by value.
template <class I, int R>
struct nf_dims {
  I d[R];
};

// N elements moved by one load or store (16 bytes for the widest dtype).
template <class T, int N>
struct __align__(sizeof(T) * N) nf_vec {
  T v[N];
};

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
