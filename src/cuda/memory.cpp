#include "cuda/memory.hpp"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/devices.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

// numfuse's own pool on each device, rather than the device's default pool, so
// that keeping memory cached is a choice made for numfuse alone and not for
// other libraries in the process that call cudaMallocAsync.
struct Pools {
  std::vector<std::once_flag> created;
  std::vector<cudaMemPool_t> handles;
  std::mutex stats_mutex;
  std::vector<MemoryStats> stats;
};

// Never destroyed: a Storage held by a static Array is freed after every
// function-local static has gone, and its deleter still updates the stats.
Pools& pools() {
  static Pools& p = *new Pools{std::vector<std::once_flag>(device_count()),
                               std::vector<cudaMemPool_t>(device_count(), nullptr),
                               {},
                               std::vector<MemoryStats>(device_count())};
  return p;
}

cudaMemPool_t pool(int device) {
  Pools& p = pools();
  std::call_once(p.created[device], [&] {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    NF_CUDA_CHECK(cudaMemPoolCreate(&p.handles[device], &props));
    // A statement's temporaries are freed when it ends and asked for again by
    // the next one; keeping freed memory in the pool (instead of returning it
    // at every synchronisation) makes those requests cheap.
    std::uint64_t keep_all = UINT64_MAX;
    NF_CUDA_CHECK(
        cudaMemPoolSetAttribute(p.handles[device], cudaMemPoolAttrReleaseThreshold, &keep_all));
  });
  return p.handles[device];
}

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1u << 30));
  return text;
}

[[noreturn]] void throw_out_of_memory(int device, std::size_t bytes) {
  const MemoryStats s = memory_stats(device);
  std::size_t free_bytes = 0, total_bytes = device_info(device).total_bytes;
  {
    DeviceGuard guard(device);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
  }
  throw OutOfMemory(
      "out of memory on cuda:" + std::to_string(device) + ": could not allocate " +
      std::to_string(bytes) + " bytes (" + gib(bytes) + "); the device has " +
      std::to_string(free_bytes) + " bytes (" + gib(free_bytes) + ") free of " + gib(total_bytes) +
      ", and numfuse holds " + gib(s.bytes_in_use) + " in " + std::to_string(s.live_allocations) +
      " buffers. Release arrays that are no longer needed or work on smaller pieces.");
}

void record_allocation(int device, std::size_t bytes) {
  Pools& p = pools();
  std::lock_guard lock(p.stats_mutex);
  MemoryStats& s = p.stats[device];
  s.bytes_in_use += bytes;
  if (s.bytes_in_use > s.peak_bytes_in_use) s.peak_bytes_in_use = s.bytes_in_use;
  ++s.live_allocations;
  ++s.total_allocations;
}

void record_free(int device, std::size_t bytes) {
  Pools& p = pools();
  std::lock_guard lock(p.stats_mutex);
  MemoryStats& s = p.stats[device];
  s.bytes_in_use -= bytes;
  --s.live_allocations;
}

void free_device(int device, std::size_t bytes, void* data) {
  // Called from a destructor, so nothing may be thrown. At process exit the
  // runtime may already be unloading (cudaErrorCudartUnloading) and the memory
  // goes with it; any other failure is a broken context, which the next
  // checked call reports.
  if (cudaFreeAsync(data, stream(device)) != cudaSuccess) cudaGetLastError();
  record_free(device, bytes);
}

}  // namespace

std::shared_ptr<Storage> allocate_device(int device, std::size_t bytes) {
  // More than the device has can never succeed, and the pool's answer to an
  // absurd size (one past its address space) need not be "out of memory".
  if (bytes > device_info(device).total_bytes) throw_out_of_memory(device, bytes);
  const cudaStream_t s = stream(device);
  auto storage = std::make_shared<Storage>();
  storage->device = Device{Device::Kind::cuda, device};
  storage->bytes = bytes;
  if (bytes == 0) return storage;
  // Set before the allocation, so that nothing can throw between it and the
  // deleter that owns it.
  storage->free_fn = [device, bytes](void* data) { free_device(device, bytes, data); };

  // Whole 4-byte words: a kernel may copy the word that holds a 1- or 2-byte
  // element (cp.async copies 4 bytes at the least), the last element's too.
  void* data = nullptr;
  const cudaError_t e = cudaMallocFromPoolAsync(&data, (bytes + 3) / 4 * 4, pool(device), s);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw_out_of_memory(device, bytes);
  }
  if (e != cudaSuccess) [[unlikely]] {
    check(e, "cudaMallocFromPoolAsync(" + std::to_string(bytes) +
                 " bytes, cuda:" + std::to_string(device) + ")");
  }
  record_allocation(device, bytes);
  storage->data = data;
  return storage;
}

MemoryStats memory_stats(int device) {
  check_device(device);
  Pools& p = pools();
  std::lock_guard lock(p.stats_mutex);
  return p.stats[device];
}

void copy_host_to_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream(device)));
}

void copy_device_to_host(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  const cudaStream_t s = stream(device);
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  NF_CUDA_CHECK(cudaStreamSynchronize(s));
}

void copy_device_to_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream(device)));
}

}  // namespace nf::cuda
