// The distributed suite's main, run by mpirun: every rank runs every test
// case, in the same order, so that their collectives meet. Exits 77 (ctest's
// skip) on every rank where the device NF_DEVICE names is missing, or where
// a machine runs more ranks than it has GPUs.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

#include "cuda/devices.hpp"

namespace {

int ranks_on_this_machine() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 0;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  std::string skip;
  try {
    if (nf::default_device().kind == nf::Device::Kind::cuda &&
        ranks_on_this_machine() > nf::cuda::device_count()) {
      skip = "more ranks on this machine than GPUs";
    }
  } catch (const nf::CudaError& e) {
    skip = e.what();
  }
  if (!skip.empty()) {
    std::printf("skipping: %s\n", skip.c_str());
    MPI_Finalize();
    return 77;
  }
  // Misuse before any test: a collective's question before init() is a
  // ValueError that says what to call.
  try {
    nf::dist::rank();
    std::printf("FAILED: nf::dist::rank() before init() did not throw\n");
    MPI_Finalize();
    return 1;
  } catch (const nf::ValueError& e) {
    if (std::string(e.what()).find("nf::dist::init()") == std::string::npos) {
      std::printf("FAILED: rank() before init() threw: %s\n", e.what());
      MPI_Finalize();
      return 1;
    }
  }
  nf::dist::init();
  const int failed = Catch::Session().run(argc, argv);
  nf::dist::finalize();
  MPI_Finalize();
  return failed;
}
