// What the CPU backend's products run on: OpenBLAS with the kernels of the
// instruction sets the CPU has, on every thread, and host arrays that large
// products and first touches can back with huge pages.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "core/storage.hpp"
#include "cpu/blas.hpp"
#include "cpu/thread_pool.hpp"

TEST_CASE("OpenBLAS runs the kernels of the CPU's instruction sets, on every thread",
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

namespace {

// (batch, m, k) @ (batch, k, n) in double, from the operands' values.
std::vector<double> product(const nf::Array& a, const nf::Array& b) {
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  const std::int64_t batch = a.shape()[0], m = a.shape()[1], k = a.shape()[2], n = b.shape()[2];
  std::vector<double> out(batch * m * n, 0.0);
  for (std::int64_t z = 0; z < batch; ++z)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t q = 0; q < k; ++q)
        for (std::int64_t j = 0; j < n; ++j)
          out[(z * m + i) * n + j] += av[(z * m + i) * k + q] * bv[(z * k + q) * n + j];
  return out;
}

}  // namespace

TEST_CASE("products cut into tiles equal plain loops: odd sides, transposed operands, batches",
          "[cpu-backend][gemm]") {
  // Each product here is large enough to be cut into tiles on two threads.
  for (nf::DType t : {nf::f32, nf::f64}) {
    for (std::int64_t batch : {1, 3}) {
      const std::int64_t m = 301, k = 129, n = 203;
      INFO(nf::name(t) << ", batch " << batch);
      const nf::Array a = nf::randn({batch, m, k}, t), b = nf::randn({batch, k, n}, t);
      // Stored transposed: the tiles read them through BLAS's layouts.
      const nf::Array at = nf::randn({batch, k, m}, t), bt = nf::randn({batch, n, k}, t);
      nf::Array c = nf::full({batch, m, n}, NAN, t);
      for (int variant = 0; variant < 3; ++variant) {
        const nf::Array& lhs = variant == 1 ? nf::Array(at.transpose({0, 2, 1})) : a;
        const nf::Array& rhs = variant == 2 ? nf::Array(bt.transpose({0, 2, 1})) : b;
        c = nf::matmul(lhs, rhs);
        const auto got = c.to_vector<double>(), want = product(lhs, rhs);
        const double tol = t == nf::f32 ? 1e-4 : 1e-12;
        std::size_t bad = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          bad += !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
        }
        INFO("variant " << variant);
        CHECK(bad == 0);
      }
    }
  }
}
