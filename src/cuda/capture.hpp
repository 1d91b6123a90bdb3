// Recording a device's statements as a CUDA graph (numfuse/record.hpp): its
// stream is captured while the body runs, and the graph then replays the
// kernels and products the body queued, over the same memory, in one launch.
#pragma once

#include <memory>

#include "plan/backend.hpp"

namespace nf::cuda {

// From here until end_capture or abandon_capture, the work queued on
// `device`'s stream is captured rather than run. Launches are made by the
// thread that queues them (no submitter), and memory is taken and freed as
// memory.hpp says while capturing.
void begin_capture(int device);
// The graph of what was captured, ready to launch, holding the memory taken
// meanwhile. Throws CudaError where the capture failed.
std::shared_ptr<const Replay> end_capture(int device);
// Ends the capture and drops what it captured.
void abandon_capture(int device) noexcept;

}  // namespace nf::cuda
