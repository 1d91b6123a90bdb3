#include "cuda/devices.hpp"

#include <mutex>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/submitter.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

struct Streams {
  std::vector<std::once_flag> created;
  std::vector<cudaStream_t> handles;
};

// Never destroyed: a Storage held by a static Array is freed on its stream
// after every function-local static has gone, and destroying the streams at
// exit would race the runtime's own teardown.
Streams& streams() {
  static Streams& s = *new Streams{std::vector<std::once_flag>(device_count()),
                                   std::vector<cudaStream_t>(device_count(), nullptr)};
  return s;
}

}  // namespace

int device_count() {
  static const int count = [] {
    int n = 0;
    // Without a driver (cudaErrorInsufficientDriver), without a device
    // (cudaErrorNoDevice) or with a driver that cannot start, there is no
    // usable GPU, and numfuse must still run on the CPU: every failure here
    // means zero devices, not an error.
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

std::string runtime_version() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? version_text(v) : "unknown";
}

std::string driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) cudaGetLastError();
  return v > 0 ? version_text(v) : "none";
}

void check_device(int device) {
  if (device < 0 || device >= device_count()) {
    throw ValueError("cuda:" + std::to_string(device) + ": no such device (this machine has " +
                     std::to_string(device_count()) + " CUDA devices)");
  }
}

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

const DeviceInfo& device_info(int device) {
  check_device(device);
  static const std::vector<DeviceInfo> infos = [] {
    std::vector<DeviceInfo> v(device_count());
    for (int d = 0; d < device_count(); ++d) {
      cudaDeviceProp p{};
      check(cudaGetDeviceProperties(&p, d),
            "cudaGetDeviceProperties(cuda:" + std::to_string(d) + ")");
      v[d] = {p.name,
              p.major,
              p.minor,
              p.multiProcessorCount,
              static_cast<std::size_t>(p.l2CacheSize),
              p.totalGlobalMem,
              p.sharedMemPerBlockOptin};
    }
    return v;
  }();
  return infos[device];
}

cudaStream_t stream(int device) {
  wait_for_submitted();
  return submission_stream(device);
}

cudaStream_t submission_stream(int device) {
  check_device(device);
  Streams& s = streams();
  std::call_once(s.created[device], [&] {
    DeviceGuard guard(device);
    NF_CUDA_CHECK(cudaStreamCreateWithFlags(&s.handles[device], cudaStreamNonBlocking));
  });
  return s.handles[device];
}

void synchronize(int device) {
  NF_CUDA_CHECK(cudaStreamSynchronize(stream(device)));
}

DeviceGuard::DeviceGuard(int device) : device_(device) {
  check_device(device);
  NF_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_) NF_CUDA_CHECK(cudaSetDevice(device_));
}

DeviceGuard::~DeviceGuard() {
  // Restoring a device that was current a moment ago cannot fail in a way a
  // destructor could report; a broken context shows at the next checked call.
  if (previous_ != device_) cudaSetDevice(previous_);
}

}  // namespace nf::cuda
