// A buffer of bytes on one device. Arrays view it through shape, strides and
// an offset; many arrays may share one storage.
#pragma once

#include <cstddef>
#include <memory>

#include "numfuse/device.hpp"

namespace nf {

struct Storage {
  Device device;
  std::size_t bytes = 0;
  void* data = nullptr;
  void (*free_fn)(void*) = nullptr;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (free_fn && data) free_fn(data);
  }
};

// Host memory, 64-byte aligned; throws OutOfMemory naming the size.
std::shared_ptr<Storage> allocate_host(std::size_t bytes);

}  // namespace nf
