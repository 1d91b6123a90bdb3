// Device time between two points of numfuse's stream on one device, measured
// with CUDA events: for benchmarks.
#pragma once

#include <cuda_runtime.h>

namespace nf::cuda {

class EventTimer {
 public:
  explicit EventTimer(int device);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start();
  // Waits for the stop event; milliseconds since start().
  double stop();

 private:
  int device_;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

}  // namespace nf::cuda
