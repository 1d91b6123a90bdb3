#include "cuda/memory.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/devices.hpp"
#include "cuda/submitter.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

// Freed blocks of up to kCachedBlock bytes wait on the host for the next
// request of their size, so that a warm statement's new arrays and
// temporaries make no CUDA call: the pool's calls take a microsecond each, and
// more while the submitter's thread launches on the same stream. Handing a
// block to a later statement is safe without waiting: its work is queued
// behind the work that used the block, on the one stream. Past kCacheBytes on
// a device, every block held goes back to the pool.
constexpr std::size_t kCachedBlock = std::size_t(32) << 20;
constexpr std::size_t kCacheBytes = std::size_t(256) << 20;

struct Cache {
  std::unordered_map<std::size_t, std::vector<void*>> blocks;  // by block size
  std::size_t bytes = 0;
};

// A device whose stream is captured (begin_capture_memory).
struct Capture {
  bool on = false;
  std::vector<std::shared_ptr<Storage>> kept;        // taken while capturing
  std::vector<std::pair<std::size_t, void*>> freed;  // bytes and block, freed meanwhile
};

// numfuse's own pool on each device, rather than the device's default pool, so
// that keeping memory cached is a choice made for numfuse alone and not for
// other libraries in the process that call cudaMallocAsync.
struct Pools {
  std::vector<std::once_flag> created;
  std::vector<cudaMemPool_t> handles;
  std::mutex mutex;  // stats and caches
  std::vector<MemoryStats> stats;
  std::vector<Cache> caches;
  std::vector<Capture> captures;
  std::atomic<int> capturing{0};  // devices whose Capture is on: a load spares the lock
  bool closed = false;            // at exit: frees skip the caches
};

// Never destroyed: a Storage held by a static Array is freed after every
// function-local static has gone, and its deleter still updates the stats.
Pools& pools() {
  static Pools& p = *new Pools{std::vector<std::once_flag>(device_count()),
                               std::vector<cudaMemPool_t>(device_count(), nullptr),
                               {},
                               std::vector<MemoryStats>(device_count()),
                               std::vector<Cache>(device_count()),
                               std::vector<Capture>(device_count())};
  return p;
}

// What a request of `bytes` takes from the pool: whole 512-byte pieces, so
// that requests of nearly one size share cached blocks, and whole 4-byte
// words at the least (a kernel may copy the word that holds a 1- or 2-byte
// element; cp.async copies 4 bytes at the least).
std::size_t block_bytes(std::size_t bytes) {
  return (bytes + 511) / 512 * 512;
}

// Kernels may read the whole aligned 16-byte vector that holds an array's
// last element (ReduceSpec::covered), bytes past its end included, and
// leave those lanes out. So that no such read sees memory nothing wrote
// (compute-sanitizer's initcheck), a block fresh from the pool has the bytes
// past its array defined: all of them in a block that may be cached, which
// a longer array may take later, or up to the next 16 bytes in one that is
// not. On the stream of the allocation, before anything else uses it.
void define_tail(void* data, std::size_t bytes, std::size_t block, cudaStream_t s) {
  const std::size_t end = block <= kCachedBlock ? block : (bytes + 15) / 16 * 16;
  if (end > bytes) {
    NF_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(data) + bytes, 0, end - bytes, s));
  }
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

void record_allocation(MemoryStats& s, std::size_t bytes) {
  s.bytes_in_use += bytes;
  if (s.bytes_in_use > s.peak_bytes_in_use) s.peak_bytes_in_use = s.bytes_in_use;
  ++s.live_allocations;
  ++s.total_allocations;
}

struct FreeJob {
  void* data;
  int device;
};

// At process exit the runtime may already be unloading
// (cudaErrorCudartUnloading) and the memory goes with it; any other failure
// is a broken context, which the next checked call reports.
void run_free(const void* payload, std::string&) {
  const FreeJob& job = *static_cast<const FreeJob*>(payload);
  if (cudaFreeAsync(job.data, submission_stream(job.device)) != cudaSuccess) cudaGetLastError();
}

// Back to the pool, behind the launches that use the memory: through the
// submitter, or here once it has made them.
void release(int device, void* data) noexcept {
  const FreeJob job{data, device};
  std::string ignored;
  if (!submit(run_free, &job, sizeof job)) run_free(&job, ignored);
}

std::vector<void*> take_cache(Cache& c) {
  std::vector<void*> all;
  for (auto& [size, blocks] : c.blocks) all.insert(all.end(), blocks.begin(), blocks.end());
  c.blocks.clear();
  c.bytes = 0;
  return all;
}

void close_caches();

// Called from a destructor, so nothing may be thrown.
void free_device(int device, std::size_t bytes, void* data) noexcept {
  const std::size_t block = block_bytes(bytes);
  std::vector<void*> released;
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    if (Capture& c = p.captures[device]; c.on) {
      c.freed.emplace_back(bytes, data);
      return;
    }
    MemoryStats& s = p.stats[device];
    s.bytes_in_use -= bytes;
    --s.live_allocations;
    if (block <= kCachedBlock && !p.closed) {
      static std::once_flag once;
      std::call_once(once, [] { std::atexit(close_caches); });
      Cache& c = p.caches[device];
      c.blocks[block].push_back(data);
      c.bytes += block;
      if (c.bytes > kCacheBytes) released = take_cache(c);
      data = nullptr;
    }
  }
  if (data) release(device, data);
  for (void* d : released) release(device, d);
}

void free_captured(int device, std::size_t bytes, void* data) noexcept {
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    MemoryStats& s = p.stats[device];
    s.bytes_in_use -= bytes;
    --s.live_allocations;
  }
  // At exit the runtime may be unloading, and the memory goes with it.
  if (cudaFree(data) != cudaSuccess) cudaGetLastError();
}

// A cached block of `block` bytes, counted as `bytes` in use; null if none.
void* take_cached(int device, std::size_t block, std::size_t bytes) {
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  Cache& c = p.caches[device];
  const auto it = c.blocks.find(block);
  if (it == c.blocks.end() || it->second.empty()) return nullptr;
  void* data = it->second.back();
  it->second.pop_back();
  c.bytes -= block;
  record_allocation(p.stats[device], bytes);
  return data;
}

// Every cached block back to the pool, made free before the call returns
// (for a request that did not fit beside them).
void empty_cache(int device) {
  std::vector<void*> all;
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    all = take_cache(p.caches[device]);
  }
  wait_for_submitted();
  std::string ignored;
  for (void* d : all) {
    const FreeJob job{d, device};
    run_free(&job, ignored);
  }
}

// At exit, before the runtime tears down (registered after it started, at
// the first block cached): every cached block goes back to the pool, and
// later frees skip the caches, so that a leak checker (compute-sanitizer's
// memcheck) finds every block numfuse took given back.
void close_caches() {
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    p.closed = true;
  }
  for (int d = 0; d < int(pools().caches.size()); ++d) {
    try {
      empty_cache(d);
    } catch (const std::exception&) {
      // A launch that failed after the program's last wait: nothing is left
      // to report it to.
    }
  }
}

bool capturing(int device) {
  Pools& p = pools();
  if (p.capturing.load(std::memory_order_relaxed) == 0) [[likely]] {
    return false;
  }
  std::lock_guard lock(p.mutex);
  return p.captures[device].on;
}

// A block for a graph being captured, by cudaMalloc: the stream-ordered pool
// would order it behind frees on the captured stream. Every byte is set, for
// the reads past an array's end (define_tail). Freed by cudaFree, which
// waits for the replays that use it.
void* allocate_for_capture(int device, std::size_t bytes, std::size_t block) {
  DeviceGuard guard(device);
  void* data = nullptr;
  const cudaError_t e = cudaMalloc(&data, block);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw_out_of_memory(device, bytes);
  }
  check(e, "cudaMalloc(" + std::to_string(bytes) + " bytes, cuda:" + std::to_string(device) +
               ", while recording)");
  NF_CUDA_CHECK(cudaMemset(data, 0, block));
  return data;
}

void keep_for_capture(int device, const std::shared_ptr<Storage>& storage) {
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  p.captures[device].kept.push_back(storage);
}

}  // namespace

void begin_capture_memory(int device) {
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  p.captures[device].on = true;
  p.capturing.fetch_add(1);
}

std::vector<std::shared_ptr<Storage>> end_capture_memory(int device) {
  Capture ended;
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    std::swap(ended, p.captures[device]);
    if (ended.on) p.capturing.fetch_sub(1);
  }
  for (const auto& [bytes, data] : ended.freed) free_device(device, bytes, data);
  return std::move(ended.kept);
}

std::shared_ptr<Storage> allocate_device(int device, std::size_t bytes) {
  // More than the device has can never succeed, and the pool's answer to an
  // absurd size (one past its address space) need not be "out of memory".
  if (bytes > device_info(device).total_bytes) throw_out_of_memory(device, bytes);
  auto storage = std::make_shared<Storage>();
  storage->device = Device{Device::Kind::cuda, device};
  storage->bytes = bytes;
  if (bytes == 0) return storage;
  // Set before the allocation, so that nothing can throw between it and the
  // deleter that owns it.
  storage->free_fn = [device, bytes](void* data) { free_device(device, bytes, data); };

  const std::size_t block = block_bytes(bytes);
  if (capturing(device)) [[unlikely]] {
    // A cached block is free of all work queued before the capture.
    storage->data = take_cached(device, block, bytes);
    if (!storage->data) {
      storage->data = allocate_for_capture(device, bytes, block);
      storage->free_fn = [device, bytes](void* data) { free_captured(device, bytes, data); };
      Pools& p = pools();
      std::lock_guard lock(p.mutex);
      record_allocation(p.stats[device], bytes);
    }
    keep_for_capture(device, storage);
    return storage;
  }
  if (void* cached = take_cached(device, block, bytes)) {
    storage->data = cached;
    return storage;
  }
  // Not stream(): the memory is ready for launches the submitter has yet to
  // make, and waiting for them would take away their overlap.
  const cudaStream_t s = submission_stream(device);
  const DeviceGuard guard(device);
  void* data = nullptr;
  cudaError_t e = cudaMallocFromPoolAsync(&data, block, pool(device), s);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    empty_cache(device);
    e = cudaMallocFromPoolAsync(&data, block, pool(device), s);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw_out_of_memory(device, bytes);
  }
  if (e != cudaSuccess) [[unlikely]] {
    check(e, "cudaMallocFromPoolAsync(" + std::to_string(bytes) +
                 " bytes, cuda:" + std::to_string(device) + ")");
  }
  {
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    record_allocation(p.stats[device], bytes);
  }
  storage->data = data;
  define_tail(data, bytes, block, s);
  return storage;
}

MemoryStats memory_stats(int device) {
  check_device(device);
  Pools& p = pools();
  std::lock_guard lock(p.mutex);
  return p.stats[device];
}

// Copies take the stream's device as the current one: the runtime refuses
// a copy on the stream of another device (cudaErrorInvalidValue).
void copy_host_to_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  const DeviceGuard guard(device);
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream(device)));
}

void copy_device_to_host(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  const DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  NF_CUDA_CHECK(cudaStreamSynchronize(s));
}

void copy_device_to_device(void* dst, const void* src, std::size_t bytes, int device) {
  if (bytes == 0) return;
  const DeviceGuard guard(device);
  NF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream(device)));
}

}  // namespace nf::cuda
