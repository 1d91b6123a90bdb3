// What the CPU backend's products run on: OpenBLAS with the kernels of the
// instruction sets the CPU has, one thread per call, and host arrays that
// large products and first touches can back with huge pages.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/storage.hpp"
#include "cpu/blas.hpp"
#include "cpu/thread_pool.hpp"

TEST_CASE("OpenBLAS runs the kernels of the CPU's instruction sets, one thread per call",
          "[cpu-backend][gemm]") {
  // The machine running the tests may name the kernels (CI's does): what is
  // checked here is numfuse's own choice.
  unsetenv("OPENBLAS_CORETYPE");
  const nf::cpu::Blas& b = nf::cpu::blas();
  INFO(b.library << ", " << b.version << ", " << b.kernels << " chosen by " << b.chosen_by);
  if (b.chosen_by == "OPENBLAS_CORETYPE") {
    WARN("an earlier test of this process loaded OpenBLAS under OPENBLAS_CORETYPE");
    return;
  }
  CHECK(b.version.rfind("OpenBLAS ", 0) == 0);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    CHECK(b.kernels == "SkylakeX");
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    CHECK(b.kernels == "Haswell");
  }
  // The variable was set only while OpenBLAS loaded.
  CHECK(std::getenv("OPENBLAS_CORETYPE") == nullptr);
  // numfuse's pool runs the tiles of a product, one OpenBLAS thread each.
  if (!std::getenv("OPENBLAS_NUM_THREADS")) {
    CHECK(b.tiled);
    CHECK(b.threads == 1);
  }
}

TEST_CASE("host arrays of 4 MiB and more start on a 2 MiB boundary", "[cpu-backend]") {
  const auto address = [](const std::shared_ptr<nf::Storage>& s) {
    return reinterpret_cast<std::uintptr_t>(s->data);
  };
  const auto small = nf::allocate_host(1000), large = nf::allocate_host((4 << 20) + 3);
  CHECK(address(small) % 64 == 0);
  CHECK(address(large) % (2 << 20) == 0);
}
