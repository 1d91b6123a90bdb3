// The suite's main: every test of behaviour runs on the device NF_DEVICE
// names, and ctest registers each once with NF_DEVICE=cpu and once with
// NF_DEVICE=cuda:0 (tests/CMakeLists.txt). Where that device does not exist
// the run exits 77, which ctest reports as skipped, not as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include <numfuse/numfuse.hpp>

int main(int argc, char* argv[]) {
  try {
    nf::default_device();
  } catch (const nf::CudaError& e) {
    std::printf("skipping: %s\n", e.what());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
