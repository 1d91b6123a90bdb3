// nf::dist::all_reduce against NCCL's own ncclAllReduce on the same GPUs,
// 1 KiB to 1 GiB of f32 a rank. Run one rank a GPU:
//   mpirun -np 2 build/release/bench/dist_bench [--max-bytes N] [--out FILE.jsonl]
//
// Each size is timed as nccl-tests times it: back-to-back calls ended by a
// wait for the device, wall clock per call (the median of 7 batches, the
// ranks starting each batch together), and the bus bandwidth of nccl-tests,
// bytes / time * 2 (n - 1) / n, the rate each rank's links carry. Rows:
//   nccl      ncclAllReduce in place on a buffer of its own, on a stream of its own;
//   in place  nf::dist::all_reduce(a, sum, a): the same reduction, numfuse's call;
//   fused     nf::dist::all_reduce(a * 0.5f, sum, out): the statement's kernel
//             into out, then the reduction there (moves the bytes twice more).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

#include "cuda/devices.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}

// Microseconds per call: the median of 7 batches of `calls` calls, each
// batch begun by every rank together and ended by `wait`.
double wall_us(const std::function<void()>& call, const std::function<void()>& wait, int calls) {
  for (int i = 0; i < std::max(2, calls / 5); ++i) call();
  wait();
  std::vector<double> per_call;
  for (int rep = 0; rep < 7; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    wait();
    const std::chrono::duration<double, std::micro> us = std::chrono::steady_clock::now() - t0;
    per_call.push_back(us.count() / calls);
  }
  std::nth_element(per_call.begin(), per_call.begin() + 3, per_call.end());
  // The slowest rank's median: the collective is as fast as it.
  double slowest = per_call[3];
  MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// nccl-tests' bus bandwidth of an all-reduce, GB/s.
double bus_gbs(double bytes, double us, int ranks) {
  return bytes / (us * 1e3) * 2.0 * (ranks - 1) / ranks;
}

class Nccl {
 public:
  explicit Nccl(int device) : device_(device) {
    ncclUniqueId id;
    if (nf::dist::rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    check(cudaSetDevice(device), "cudaSetDevice");
    check(ncclCommInitRank(&comm_, nf::dist::size(), id, nf::dist::rank()), "ncclCommInitRank");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Nccl() {
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }
  void all_reduce(float* data, std::size_t count) {
    check(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
  }
  void wait() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

 private:
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = std::size_t(1) << 30;
  std::string out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-bytes") max_bytes = std::stoull(argv[i + 1]);
    if (flag == "--out") out_path = argv[i + 1];
  }
  nf::dist::init();
  const nf::Device dev = nf::default_device();
  if (dev.kind != nf::Device::Kind::cuda) {
    std::fprintf(stderr, "dist_bench times GPUs: run it where each rank has one\n");
    return 1;
  }
  const int ranks = nf::dist::size();
  const bool lead = nf::dist::rank() == 0;
  Nccl nccl(dev.index);
  float* raw = nullptr;
  check(cudaMalloc(&raw, max_bytes), "cudaMalloc");
  check(cudaMemset(raw, 0, max_bytes), "cudaMemset");
  std::ofstream out;
  if (lead && !out_path.empty()) out.open(out_path);
  if (lead) {
    std::printf(
        "all_reduce(sum) of f32 over %d ranks on %s; bus GB/s as nccl-tests "
        "(bytes / time * 2(n-1)/n)\n",
        ranks, nf::cuda::device_info(dev.index).name.c_str());
    std::printf("%12s %10s %9s %10s %9s %7s %10s %9s\n", "bytes", "nccl us", "nccl GB/s",
                "inplace us", "GB/s", "ratio", "fused us", "GB/s");
  }
  for (std::size_t bytes = 1024; bytes <= max_bytes; bytes *= 2) {
    const std::int64_t n = static_cast<std::int64_t>(bytes / 4);
    const int calls = static_cast<int>(std::clamp<double>(4e9 / double(bytes), 10, 500));
    const double nccl_us =
        wall_us([&] { nccl.all_reduce(raw, std::size_t(n)); }, [&] { nccl.wait(); }, calls);
    nf::Array a = nf::randn({n}) * 1e-3f;
    nf::Array fused_out = nf::empty({n});
    const auto nf_wait = [&] { nf::cuda::synchronize(dev.index); };
    const double inplace_us =
        wall_us([&] { nf::dist::all_reduce(a, nf::dist::Op::sum, a); }, nf_wait, calls);
    const double fused_us = wall_us(
        [&] { nf::dist::all_reduce(a * 0.5f, nf::dist::Op::sum, fused_out); }, nf_wait, calls);
    const double b = double(bytes);
    if (lead) {
      std::printf("%12zu %10.1f %9.1f %10.1f %9.1f %7.3f %10.1f %9.1f\n", bytes, nccl_us,
                  bus_gbs(b, nccl_us, ranks), inplace_us, bus_gbs(b, inplace_us, ranks),
                  nccl_us / inplace_us, fused_us, bus_gbs(b, fused_us, ranks));
      if (out) {
        out << "{\"bytes\": " << bytes << ", \"ranks\": " << ranks << ", \"nccl_us\": " << nccl_us
            << ", \"inplace_us\": " << inplace_us << ", \"fused_us\": " << fused_us
            << ", \"nccl_busbw\": " << bus_gbs(b, nccl_us, ranks)
            << ", \"inplace_busbw\": " << bus_gbs(b, inplace_us, ranks)
            << ", \"fused_busbw\": " << bus_gbs(b, fused_us, ranks) << "}\n";
      }
    }
  }
  cudaFree(raw);
  nf::dist::finalize();
  return 0;
}
