#include "core/storage.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {
namespace {

// Arrays of 4 MiB and more start on a 2 MiB boundary and are offered to
// transparent huge pages, as numpy does: a touch then maps 2 MiB at once, and
// BLAS's packing of a large operand misses the TLB far less (the 2000x40000
// by 40000x2000 f32 product took 389 ms on 4 KiB pages and 348 ms on 2 MiB
// pages on the H100 machine's CPUs, bench/RESULTS.md).
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kHugeFrom = std::size_t(4) << 20;

void* allocate_aligned(std::size_t bytes) {
  const std::size_t align = bytes >= kHugeFrom ? kHugePage : 64;
  const std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  // Advice only: where the kernel has no huge pages the memory is as good.
  if (p && align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace

std::shared_ptr<Storage> allocate_host(std::size_t bytes) {
  auto s = std::make_shared<Storage>();
  s->bytes = bytes;
  if (bytes == 0) return s;
  // A process maps at most 2^47 (x86-64) or 2^48 (arm64) bytes: a larger
  // request is refused here, not passed to an allocator that may abort on
  // it (a sanitizer's does). The bound also keeps the rounding from wrapping.
  constexpr std::size_t kMaxHostBytes = std::size_t(1) << 48;
  if (bytes <= kMaxHostBytes) s->data = allocate_aligned(bytes);
  if (!s->data) {
    throw OutOfMemory(
        "could not allocate " + std::to_string(bytes) + " bytes of host memory" +
        (bytes > kMaxHostBytes ? " (more than a process addresses, 2^48 bytes)" : ""));
  }
  s->free_fn = std::free;
  return s;
}

}  // namespace nf
