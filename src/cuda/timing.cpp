#include "cuda/timing.hpp"

#include "cuda/check.hpp"
#include "cuda/devices.hpp"

namespace nf::cuda {

EventTimer::EventTimer(int device) : device_(device) {
  DeviceGuard guard(device);
  NF_CUDA_CHECK(cudaEventCreate(&begin_));
  NF_CUDA_CHECK(cudaEventCreate(&end_));
}

EventTimer::~EventTimer() {
  cudaEventDestroy(begin_);
  cudaEventDestroy(end_);
}

void EventTimer::start() {
  const DeviceGuard guard(device_);
  NF_CUDA_CHECK(cudaEventRecord(begin_, stream(device_)));
}

double EventTimer::stop() {
  const DeviceGuard guard(device_);
  NF_CUDA_CHECK(cudaEventRecord(end_, stream(device_)));
  NF_CUDA_CHECK(cudaEventSynchronize(end_));
  float ms = 0;
  NF_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
  return ms;
}

}  // namespace nf::cuda
