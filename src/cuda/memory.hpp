// Device memory from CUDA's stream-ordered pool (small blocks kept on the host
// between uses), its statistics, and copies. Everything is ordered on the
// device's one stream, so a buffer freed after a kernel that reads it is
// reused only by work queued after that kernel.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/storage.hpp"

namespace nf::cuda {

// `bytes` of memory on `device`, ready for work queued on its stream. Throws
// OutOfMemory naming the size and the device.
std::shared_ptr<Storage> allocate_device(int device, std::size_t bytes);

// Memory while `device`'s stream is captured into a graph (capture.hpp).
// Blocks are then taken outside the stream (the graph must not allocate
// them at each replay), each block taken is kept for the graph's life, and
// blocks freed meanwhile go back once the capture ends (freeing them would
// be captured too). end_capture_memory returns the blocks to keep.
void begin_capture_memory(int device);
std::vector<std::shared_ptr<Storage>> end_capture_memory(int device);

struct MemoryStats {
  std::size_t bytes_in_use = 0;
  std::size_t peak_bytes_in_use = 0;
  std::size_t live_allocations = 0;
  std::size_t total_allocations = 0;  // since the process started
};

// What numfuse holds on `device`, counted in the bytes asked for.
MemoryStats memory_stats(int device);

// All three are queued on `device`'s stream. `src` may be reused as soon as
// copy_host_to_device returns: the runtime stages pageable host memory, which
// is all numfuse allocates on the host. copy_device_to_host waits for the copy.
void copy_host_to_device(void* dst, const void* src, std::size_t bytes, int device);
void copy_device_to_host(void* dst, const void* src, std::size_t bytes, int device);
void copy_device_to_device(void* dst, const void* src, std::size_t bytes, int device);

}  // namespace nf::cuda
