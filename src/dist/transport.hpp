// How a collective's bytes move between ranks: MPI for host memory (the CPU
// backend's arrays), NCCL for a GPU's. collectives.cpp has checked and
// evaluated everything before it calls one; a transport only moves and
// combines contiguous elements.
#pragma once

#include <cstddef>
#include <functional>

#include "numfuse/dist.hpp"
#include "numfuse/dtype.hpp"

namespace nf::dist {

class Transport {
 public:
  virtual ~Transport() = default;

  // `data` holds this rank's `count` elements and receives the combination.
  virtual void all_reduce(void* data, std::size_t count, DType dtype, Op op) = 0;
  // all_reduce queued beside numfuse's stream rather than on it, after the
  // work queued there so far; the function returned has numfuse's stream
  // wait for it. Where there is no such stream (host memory) the collective
  // has run by the time this returns, and the function does nothing.
  virtual std::function<void()> all_reduce_beside(void* data, std::size_t count, DType dtype,
                                                  Op op) = 0;
  // `data` receives root's `count` elements.
  virtual void broadcast(void* data, std::size_t count, DType dtype, int root) = 0;
  // `data` holds size() parts of `count` elements, this rank's in part
  // rank(), and receives every rank's in theirs.
  virtual void all_gather(void* data, std::size_t count, DType dtype) = 0;
  // `send` holds size() parts of `count` elements; `recv` receives part
  // rank() combined over the ranks.
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                              Op op) = 0;
};

// MPI, on numfuse's communicator.
Transport& host_transport();

// NCCL on `device`, its communicator made on first use from an id that MPI
// spreads (every rank comes here in the same collective). Throws CudaError
// where numfuse::dist was built without NCCL.
Transport& device_transport(int device);

// Destroys the NCCL communicators, at finalize().
void close_device_transports();

}  // namespace nf::dist
