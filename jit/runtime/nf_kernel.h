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
