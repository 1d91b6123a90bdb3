#include "core/storage.hpp"

#include <cstdlib>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {

std::shared_ptr<Storage> allocate_host(std::size_t bytes) {
  auto s = std::make_shared<Storage>();
  s->bytes = bytes;
  if (bytes == 0) return s;
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  s->data = std::aligned_alloc(64, rounded);
  if (!s->data) {
    throw OutOfMemory("could not allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  s->free_fn = std::free;
  return s;
}

}  // namespace nf
