#include "cpu/scratch.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <utility>
#include <vector>

namespace nf::cpu {
namespace {

// A block of 16384 f64 values is 128 KiB, glibc's threshold for mapping an
// allocation from the kernel and for giving the top of the heap back.
// Allocated and freed for each op of each block, such buffers were mapped,
// faulted in and given back again and again: exp(-x * x) * 0.5 + x over 16.8M
// f64 took 700 ms on one thread, 87 ms with glibc's thresholds raised
// (development machine, 2026-11-29). A thread keeps what its blocks held at
// once, up to kKept buffers of at most kLargest bytes (64 MiB), so that a
// statement of many ops finds each value's buffer again in its next block.
constexpr std::size_t kSmallest = std::size_t(4) << 10;  // sizes are powers of two from here
constexpr std::size_t kLargest = std::size_t(1) << 20;   // larger ones are not kept
constexpr std::size_t kKept = 64;

struct Buffers {
  std::vector<std::pair<std::size_t, void*>> free;  // (size, buffer)
  ~Buffers();
};

// Set when the thread's buffers are gone (the thread is ending): memory freed
// after that goes back to malloc.
thread_local bool t_gone = false;
thread_local Buffers t_buffers;

Buffers::~Buffers() {
  t_gone = true;
  for (const auto& [size, p] : free) std::free(p);
}

void give_back(void* p, std::size_t size) {
  if (t_gone || t_buffers.free.size() == kKept) {
    std::free(p);
    return;
  }
  t_buffers.free.emplace_back(size, p);
}

}  // namespace

std::shared_ptr<Storage> scratch_storage(std::size_t bytes) {
  if (bytes == 0 || bytes > kLargest) return allocate_host(bytes);
  const std::size_t size = std::max(kSmallest, std::bit_ceil(bytes));
  auto s = std::make_shared<Storage>();
  s->bytes = bytes;
  std::vector<std::pair<std::size_t, void*>>& free = t_buffers.free;
  for (std::size_t i = free.size(); i-- > 0;) {
    if (free[i].first == size) {
      s->data = free[i].second;
      free[i] = free.back();
      free.pop_back();
      break;
    }
  }
  if (!s->data) s->data = std::aligned_alloc(64, size);
  if (!s->data) return allocate_host(bytes);  // which throws OutOfMemory, naming the size
  s->free_fn = [size](void* p) { give_back(p, size); };
  return s;
}

}  // namespace nf::cpu
