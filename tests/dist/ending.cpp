// A job whose rank 1 stops taking part, for tests/dist/ending.sh:
//   skip   rank 1 leaves out a collective and calls the next one;
//   stall  rank 1 calls no collective for longer than NF_DIST_TIMEOUT;
//   throw  rank 1 ends on an exception nobody catches.
// In each the other ranks must not wait forever: the job ends, saying why.
// And one that ends well without calling finalize():
//   exit   every rank sums an array and returns from main; numfuse ends
//          NCCL and MPI at exit, after which every rank exits 0. Exits 77
//          (ctest's skip) where NF_DEVICE is a GPU and a machine has fewer
//          GPUs than ranks, or none.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

#include "cuda/devices.hpp"

namespace {

// Whether this machine lacks a GPU for each of the job's ranks on it, asked
// before init(), which would throw on the ranks past the last GPU alone.
bool too_few_gpus() {
  const char* ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  try {
    return nf::default_device().kind == nf::Device::Kind::cuda &&
           nf::cuda::device_count() < (ranks ? std::atoi(ranks) : 1);
  } catch (const nf::CudaError&) {
    return true;
  }
}

// Every rank sums, and the program ends without finalize().
int exit_without_finalize() {
  if (too_few_gpus()) return 77;
  nf::dist::init();
  const nf::Array x = nf::dist::all_reduce(nf::ones({1000}) * 2.0f);
  const float expected = 2.0f * float(nf::dist::size());
  const float got = nf::max(nf::abs(x - expected)).item<float>();
  std::printf("rank %d: sum %s; returning without finalize()\n", nf::dist::rank(),
              got == 0 ? "right" : "WRONG");
  return got == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "exit") return exit_without_finalize();
  if (mode != "skip" && mode != "stall" && mode != "throw") {
    std::fprintf(stderr, "usage: %s skip|stall|throw|exit\n", argv[0]);
    return 2;
  }
  nf::dist::init();
  const nf::Array x = nf::ones({4});
  if (nf::dist::rank() != 1) {
    nf::dist::all_reduce(x);
  } else if (mode == "stall") {
    std::this_thread::sleep_for(std::chrono::seconds(30));
  } else if (mode == "throw") {
    throw std::runtime_error("rank 1's own failure");
  }
  nf::dist::barrier();
  std::printf("rank %d: every rank went on\n", nf::dist::rank());
  nf::dist::finalize();
  return 0;
}
