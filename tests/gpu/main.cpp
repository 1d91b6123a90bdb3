#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "cuda/devices.hpp"

// 77 is this test's SKIP_RETURN_CODE (tests/gpu/CMakeLists.txt): without a GPU
// the run is reported as skipped, not as passed.
int main(int argc, char* argv[]) {
  if (nf::cuda::device_count() == 0) {
    std::puts("no CUDA device: skipping");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
