// The CUDA devices of this process: how many, what they are, and the one
// stream per device on which numfuse orders all of its work.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace nf::cuda {

// 0 when there is no driver or no device: the CPU backend then runs alone.
// Asked once per process; later calls are a load.
int device_count();

// "major.minor" of the CUDA runtime numfuse is built with, and of the CUDA
// version the driver supports ("none" where there is no driver).
std::string runtime_version();
std::string driver_version();

struct DeviceInfo {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_bytes = 0;
  std::size_t max_shared_per_block_optin = 0;

  std::string arch() const;  // "sm_90": the target NVRTC compiles for
};

// Throws ValueError for an index outside [0, device_count()); so does every
// function here and in the rest of src/cuda that takes a device.
void check_device(int device);

const DeviceInfo& device_info(int device);

// A non-blocking stream (no implicit synchronisation with the legacy default
// stream, which other libraries in the process may use), created at first use.
// Work queued on it follows every launch submitted before (submitter.hpp):
// stream() waits for the submitter to have made them.
cudaStream_t stream(int device);

// The same stream without that wait: for the submitter's own jobs, and for
// allocations, which may come before launches still waiting to be made (the
// memory they take was freed behind every launch that used it).
cudaStream_t submission_stream(int device);

// Waits until everything numfuse queued on `device` has finished.
void synchronize(int device);

// Makes `device` current for the calling thread while in scope, for the few
// runtime calls that act on the current device rather than on a stream.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  int device_ = 0;
};

}  // namespace nf::cuda
