// Every CUDA runtime call goes through check(), so a failure surfaces as
// nf::CudaError at the call that failed instead of at some later call.
#pragma once

#include <cuda_runtime.h>

#include <string_view>

namespace nf::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t e, std::string_view call);

// `call` names what failed ("cudaMallocAsync", or with its arguments) for the
// message. Inline so that the success path costs one comparison.
inline void check(cudaError_t e, std::string_view call) {
  if (e != cudaSuccess) [[unlikely]]
    throw_cuda_error(e, call);
}

}  // namespace nf::cuda

// Names the call by its own source text.
#define NF_CUDA_CHECK(call) ::nf::cuda::check((call), #call)
