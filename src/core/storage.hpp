// A buffer of bytes on one device. Arrays view it through shape, strides and
// an offset; many arrays may share one storage.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "numfuse/device.hpp"

namespace nf {

struct Storage {
  Device device;
  std::size_t bytes = 0;
  void* data = nullptr;
  // A function object, not a plain pointer, so that a deleter can carry what it
  // needs: device memory goes back to the pool on its device's stream.
  std::function<void(void*)> free_fn;

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
