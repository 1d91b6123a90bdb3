#include "cuda/kernels.hpp"

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/devices.hpp"
#include "cuda/submitter.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

// The runtime takes a cudaKernel_t wherever it takes a kernel's address.
const void* entry(const LoadedKernel& k) {
  return reinterpret_cast<const void*>(k.kernel);
}

std::string kernel_name(const LoadedKernel& k) {
  const char* name = nullptr;
  if (cudaFuncGetName(&name, entry(k)) != cudaSuccess || !name) {
    cudaGetLastError();
    return "?";
  }
  return name;
}

std::string dims(dim3 d) {
  std::string text = "(";
  text += std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
  return text;
}

// The driver functions numfuse calls, from the runtime, once a process.
struct Driver {
  decltype(&cuKernelGetFunction) kernel_function = nullptr;
  decltype(&cuLaunchKernel) launch = nullptr;
  decltype(&cuLaunchKernelEx) launch_ex = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
  decltype(&cuGetErrorString) error_string = nullptr;
};

template <class F>
void entry_point(F& f, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found),
        std::string("cudaGetDriverEntryPointByVersion(") + name + ")");
  if (found != cudaDriverEntryPointSuccess || !p) {
    throw CudaError(std::string("the CUDA driver has no ") + name);
  }
  f = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    entry_point(d.kernel_function, "cuKernelGetFunction");
    entry_point(d.launch, "cuLaunchKernel");
    entry_point(d.launch_ex, "cuLaunchKernelEx");
    entry_point(d.error_name, "cuGetErrorName");
    entry_point(d.error_string, "cuGetErrorString");
    return d;
  }();
  return d;
}

std::string driver_error(CUresult r, const std::string& call) {
  const char* name = nullptr;
  const char* text = nullptr;
  driver().error_name(r, &name);
  driver().error_string(r, &text);
  return call + " failed: " + (text ? text : "unknown error") + " (" +
         (name ? name : std::to_string(int(r))) + ")";
}

[[noreturn]] void throw_driver_error(CUresult r, const std::string& call) {
  throw CudaError(driver_error(r, call));
}

// Makes the driver's launch call on `s`; the error names the kernel, its
// device and its shape, or is empty.
std::string launch_on(cudaStream_t s, const LoadedKernel& kernel, int device, dim3 grid, dim3 block,
                      void** args, std::size_t shared_bytes) {
  CUresult r;
  if (kernel.launch_early) {
    CUlaunchAttribute early{};
    early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    early.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = grid.x;
    config.gridDimY = grid.y;
    config.gridDimZ = grid.z;
    config.blockDimX = block.x;
    config.blockDimY = block.y;
    config.blockDimZ = block.z;
    config.sharedMemBytes = unsigned(shared_bytes);
    config.hStream = s;
    config.attrs = &early;
    config.numAttrs = 1;
    r = driver().launch_ex(&config, kernel.function, args, nullptr);
  } else {
    r = driver().launch(kernel.function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                        unsigned(shared_bytes), s, args, nullptr);
  }
  if (r == CUDA_SUCCESS) [[likely]] {
    return {};
  }
  return driver_error(
      r, std::string(kernel.launch_early ? "cuLaunchKernelEx(" : "cuLaunchKernel(") +
             kernel_name(kernel) + " on cuda:" + std::to_string(device) + ", grid " + dims(grid) +
             ", block " + dims(block) + ", " + std::to_string(shared_bytes) +
             " bytes of dynamic shared memory)");
}

// A launch for the submitter: the kernel, its shape, and a copy of its
// parameter values, `words` of them and then the first word of each of
// `params` parameters.
struct LaunchJob {
  LoadedKernel kernel;
  dim3 grid, block;
  std::uint32_t shared_bytes = 0;
  int device = 0;
  std::uint32_t words = 0, params = 0;
  // The words left of a payload after the fields above (under 96 bytes).
  static constexpr std::size_t kRoom = (kJobPayloadBytes - 96) / sizeof(std::uint64_t);
  std::uint64_t data[kRoom];

  std::size_t bytes() const {
    return offsetof(LaunchJob, data) + words * sizeof(std::uint64_t) +
           params * sizeof(std::uint32_t);
  }
  const std::uint32_t* slots() const {
    return reinterpret_cast<const std::uint32_t*>(data + words);
  }
};
static_assert(sizeof(LaunchJob) <= kJobPayloadBytes);

void run_launch(const void* payload, std::string& error) {
  const LaunchJob& job = *static_cast<const LaunchJob*>(payload);
  // The submitter's thread makes each job's device its own, once.
  thread_local int current = -1;
  if (current != job.device) {
    if (const cudaError_t e = cudaSetDevice(job.device); e != cudaSuccess) {
      error = std::string("cudaSetDevice(") + std::to_string(job.device) +
              ") failed: " + cudaGetErrorString(e);
      return;
    }
    current = job.device;
  }
  void* pointers[LaunchJob::kRoom];
  const std::uint32_t* slots = job.slots();
  for (std::uint32_t i = 0; i < job.params; ++i) {
    pointers[i] = const_cast<std::uint64_t*>(job.data + slots[i]);
  }
  error = launch_on(submission_stream(job.device), job.kernel, job.device, job.grid, job.block,
                    pointers, job.shared_bytes);
}

}  // namespace

LoadedKernel load_kernel(int device, const void* image, std::size_t size, const char* name) {
  check_device(device);
  const std::string what = std::string("kernel ") + name + " for cuda:" + std::to_string(device);
  // PTX must end in a NUL. A copy that appends one costs nothing next to
  // loading, and a binary image is unharmed by the extra byte.
  const char* bytes = static_cast<const char*>(image);
  std::string terminated;
  if (size == 0 || bytes[size - 1] != '\0') {
    terminated.assign(bytes, size);
    image = terminated.c_str();
  }

  LoadedKernel k;
  check(cudaLibraryLoadData(&k.library, image, nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData(" + what + ")");
  try {
    // With `device` current, asking for the kernel loads the image into that
    // device's context, so an image it cannot run fails here, naming the
    // kernel, rather than at the first launch.
    DeviceGuard guard(device);
    check(cudaLibraryGetKernel(&k.kernel, k.library, name), "cudaLibraryGetKernel(" + what + ")");
    const CUresult r = driver().kernel_function(&k.function, reinterpret_cast<CUkernel>(k.kernel));
    if (r != CUDA_SUCCESS) throw_driver_error(r, "cuKernelGetFunction(" + what + ")");
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, entry(k)), "cudaFuncGetAttributes(" + what + ")");
    // Above 48 KiB of dynamic shared memory a kernel must opt in. Opting in to
    // all the device allows, once here, keeps launches free of attribute calls
    // that threads launching the same kernel could interleave.
    const int dynamic_max = static_cast<int>(device_info(device).max_shared_per_block_optin -
                                             attributes.sharedSizeBytes);
    check(cudaKernelSetAttributeForDevice(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          dynamic_max, device),
          "cudaKernelSetAttributeForDevice(" + what + ", max dynamic shared memory " +
              std::to_string(dynamic_max) + ")");
  } catch (...) {
    cudaLibraryUnload(k.library);
    throw;
  }
  return k;
}

void unload_kernel(const LoadedKernel& kernel) {
  wait_for_submitted();  // a launch still to be made may name it
  NF_CUDA_CHECK(cudaLibraryUnload(kernel.library));
}

void launch(const LoadedKernel& kernel, int device, dim3 grid, dim3 block, void** args,
            std::size_t shared_bytes) {
  const std::string error =
      launch_on(stream(device), kernel, device, grid, block, args, shared_bytes);
  if (!error.empty()) [[unlikely]] {
    throw CudaError(error);
  }
}

void launch(const LoadedKernel& kernel, int device, dim3 grid, dim3 block,
            std::span<const std::uint64_t> words, std::span<const std::uint32_t> slots,
            std::size_t shared_bytes) {
  LaunchJob job;
  if (words.size() + (slots.size() + 1) / 2 <= LaunchJob::kRoom) {
    job.kernel = kernel;
    job.grid = grid;
    job.block = block;
    job.shared_bytes = std::uint32_t(shared_bytes);
    job.device = device;
    job.words = std::uint32_t(words.size());
    job.params = std::uint32_t(slots.size());
    std::memcpy(job.data, words.data(), words.size_bytes());
    std::memcpy(job.data + words.size(), slots.data(), slots.size_bytes());
    if (submit(run_launch, &job, job.bytes())) return;
  }
  std::vector<void*> pointers(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    pointers[i] = const_cast<std::uint64_t*>(words.data() + slots[i]);
  }
  launch(kernel, device, grid, block, pointers.data(), shared_bytes);
}

int occupancy_blocks(const LoadedKernel& kernel, int device, int block, std::size_t shared_bytes) {
  DeviceGuard guard(device);
  int blocks = 0;
  NF_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, entry(kernel), block, shared_bytes));
  return blocks;
}

}  // namespace nf::cuda
