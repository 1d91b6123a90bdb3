#include "core/storage.hpp"

#include <cstdlib>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {

std::shared_ptr<Storage> allocate_host(std::size_t bytes) {
  auto s = std::make_shared<Storage>();
  s->bytes = bytes;
  if (bytes == 0) return s;
  // A process maps at most 2^47 (x86-64) or 2^48 (arm64) bytes: a larger
  // request is refused here, not passed to an allocator that may abort on
  // it (a sanitizer's does). The bound also keeps the rounding from wrapping.
  constexpr std::size_t kMaxHostBytes = std::size_t(1) << 48;
  if (bytes <= kMaxHostBytes) s->data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!s->data) {
    throw OutOfMemory(
        "could not allocate " + std::to_string(bytes) + " bytes of host memory" +
        (bytes > kMaxHostBytes ? " (more than a process addresses, 2^48 bytes)" : ""));
  }
  s->free_fn = std::free;
  return s;
}

}  // namespace nf
