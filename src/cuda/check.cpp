#include "cuda/check.hpp"

#include <string>

#include "numfuse/errors.hpp"

namespace nf::cuda {

void throw_cuda_error(cudaError_t e, std::string_view call) {
  // The runtime also records a failure as the thread's last error; clear it so
  // that a later cudaGetLastError does not report this one a second time.
  // Sticky errors (a faulted kernel) are not cleared by this: every later call
  // reports them, which is right, since the context is unusable.
  cudaGetLastError();
  throw CudaError(std::string(call) + " failed: " + cudaGetErrorString(e) + " (" +
                  cudaGetErrorName(e) + ")");
}

}  // namespace nf::cuda
