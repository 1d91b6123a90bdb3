// Collectives over NCCL for arrays on a GPU, queued on numfuse's stream of
// that device: after the kernel that wrote the data, before any that reads
// the result, with no wait on the host. all_reduce_beside queues its
// collective on a stream of its own instead, ordered against numfuse's by
// events.
#include <nccl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cuda/check.hpp"
#include "cuda/devices.hpp"
#include "dist/transport.hpp"
#include "dist/world.hpp"
#include "numfuse/errors.hpp"

namespace nf::dist {
namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case f16:
      return ncclFloat16;
    case bf16:
      return ncclBfloat16;
    case f32:
      return ncclFloat32;
    case f64:
      return ncclFloat64;
    case i32:
      return ncclInt32;
    case i64:
      return ncclInt64;
    case u8:
    case bool_:
      return ncclUint8;
  }
  throw InternalError("dist: a dtype with no NCCL type");
}

ncclRedOp_t nccl_op(Op op) {
  switch (op) {
    case Op::sum:
      return ncclSum;
    case Op::mean:
      return ncclAvg;
    case Op::max:
      return ncclMax;
    case Op::min:
      return ncclMin;
  }
  throw InternalError("dist: an op with no NCCL op");
}

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(int device) : device_(device) {
    ncclUniqueId id;
    if (rank() == 0) check(ncclGetUniqueId(&id), "making the communicator's id");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, communicator());
    const cuda::DeviceGuard guard(device);
    check(ncclCommInitRank(&comm_, size(), id, rank()), "making the communicator");
    // The highest priority, so that a collective's blocks start as soon as
    // the products beside it leave room, rather than after all of them.
    int lowest = 0, highest = 0;
    NF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    NF_CUDA_CHECK(cudaStreamCreateWithPriority(&beside_, cudaStreamNonBlocking, highest));
    // After NCCL's CUDA runtime and this library's have started, and so
    // registered their exit handlers.
    finalize_at_exit();
  }
  ~NcclTransport() override {
    ncclCommDestroy(comm_);
    cudaStreamDestroy(beside_);
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  void all_reduce(void* data, std::size_t count, DType dtype, Op op) override {
    check_health();
    check(ncclAllReduce(data, data, count, nccl_type(dtype), nccl_op(op), comm_,
                        cuda::stream(device_)),
          "all_reduce");
  }

  // numfuse's stream -> `queued` -> the collective on beside_ -> `done`,
  // which numfuse's stream waits for when the function returned is called.
  std::function<void()> all_reduce_beside(void* data, std::size_t count, DType dtype,
                                          Op op) override {
    check_health();
    const cuda::DeviceGuard guard(device_);
    cudaEvent_t queued = nullptr, done = nullptr;
    NF_CUDA_CHECK(cudaEventCreateWithFlags(&queued, cudaEventDisableTiming));
    NF_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    NF_CUDA_CHECK(cudaEventRecord(queued, cuda::stream(device_)));
    NF_CUDA_CHECK(cudaStreamWaitEvent(beside_, queued));
    check(ncclAllReduce(data, data, count, nccl_type(dtype), nccl_op(op), comm_, beside_),
          "all_reduce");
    NF_CUDA_CHECK(cudaEventRecord(done, beside_));
    cudaEventDestroy(queued);  // freed once it has happened
    const int device = device_;
    return [device, done] {
      const cuda::DeviceGuard guard(device);
      NF_CUDA_CHECK(cudaStreamWaitEvent(cuda::stream(device), done));
      cudaEventDestroy(done);
    };
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root) override {
    check_health();
    check(ncclBroadcast(data, data, count, nccl_type(dtype), root, comm_, cuda::stream(device_)),
          "broadcast");
  }

  void all_gather(void* data, std::size_t count, DType dtype) override {
    check_health();
    const void* mine = static_cast<char*>(data) + rank() * count * itemsize(dtype);
    check(ncclAllGather(mine, data, count, nccl_type(dtype), comm_, cuda::stream(device_)),
          "all_gather");
  }

  void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                      Op op) override {
    check_health();
    check(ncclReduceScatter(send, recv, count, nccl_type(dtype), nccl_op(op), comm_,
                            cuda::stream(device_)),
          "reduce_scatter");
  }

 private:
  // A failed NCCL call leaves the other ranks inside theirs: the job ends.
  void check(ncclResult_t r, const char* what) {
    if (r == ncclSuccess) return;
    std::string why = std::string("NCCL failed in ") + what +
                      " on cuda:" + std::to_string(device_) + ": " + ncclGetErrorString(r);
    if (comm_) {
      if (const char* last = ncclGetLastError(comm_); last && *last)
        why += std::string(" (") + last + ")";
      ncclCommAbort(comm_);
    }
    end_job(why);
  }

  // An error of an earlier collective, found by NCCL after its call returned
  // (a peer gone, a network fault).
  void check_health() {
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    check(async, "an earlier collective");
  }

  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t beside_ = nullptr;  // where all_reduce_beside's collectives run
};

std::map<int, std::unique_ptr<NcclTransport>>& transports() {
  static std::map<int, std::unique_ptr<NcclTransport>> t;
  return t;
}

}  // namespace

Transport& device_transport(int device) {
  std::unique_ptr<NcclTransport>& t = transports()[device];
  if (!t) t = std::make_unique<NcclTransport>(device);
  return *t;
}

void close_device_transports() {
  transports().clear();
}

}  // namespace nf::dist
