// Loading generated kernels through the runtime API's library calls, and
// launching them through the driver's cuLaunchKernel, which the runtime hands
// out (cudaGetDriverEntryPointByVersion): numfuse has no link to libcuda and
// still loads where there is no driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace nf::cuda {

struct LoadedKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  // The kernel in the context of the device it was loaded for: a launch
  // through it skips the runtime's lookup of the kernel in the current
  // context (3.02 against 3.22 µs a launch on an H200, bench/RESULTS.md).
  CUfunction function = nullptr;
  // Launched before the kernels ahead of it in the stream have finished
  // (programmatic dependent launch). Only for a kernel that waits for them
  // before it touches memory: generated kernels built for sm_90 or later
  // (nf_wait_for_earlier_kernels in jit/runtime/nf_kernel.h).
  bool launch_early = false;
};

// Loads `image` (a cubin, or PTX text with or without its closing NUL: `size`
// says where it ends) and finds the kernel `name` in it, ready to launch on
// `device` with any dynamic shared memory the device allows. An image the
// device cannot run fails here, naming the kernel, not at its first launch.
LoadedKernel load_kernel(int device, const void* image, std::size_t size, const char* name);

void unload_kernel(const LoadedKernel& kernel);

// Queues the kernel on `device`'s stream. `args` points to each parameter, as
// for cuLaunchKernel. A kernel that may launch early does, so that its launch
// overlaps the end of the kernel ahead (about 2 µs of each softmax on
// 1024x32768 on an H200, bench/RESULTS.md).
void launch(const LoadedKernel& kernel, int device, dim3 grid, dim3 block, void** args,
            std::size_t shared_bytes);

// The same for parameter values packed in 8-byte words, parameter i starting
// at word slots[i], made by the submitter's thread where it takes the launch
// (submitter.hpp). A launch that fails there is thrown by the next call that
// waits for the stream (a read, a synchronisation).
void launch(const LoadedKernel& kernel, int device, dim3 grid, dim3 block,
            std::span<const std::uint64_t> words, std::span<const std::uint32_t> slots,
            std::size_t shared_bytes);

// How many blocks of `block` threads and `shared_bytes` of dynamic shared
// memory fit on one multiprocessor of `device` at once.
int occupancy_blocks(const LoadedKernel& kernel, int device, int block, std::size_t shared_bytes);

}  // namespace nf::cuda
