// Device memory as users see it over many statements, and a statement that
// cannot allocate.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "cuda/devices.hpp"
#include "cuda/memory.hpp"

namespace {

const nf::Device kGpu{nf::Device::Kind::cuda, 0};

// Every buffer numfuse holds on the device, once the work queued has ended.
nf::cuda::MemoryStats settled() {
  nf::cuda::synchronize(0);
  return nf::cuda::memory_stats(0);
}

}  // namespace

TEST_CASE("memory returns to where it started after 10,000 warm statements", "[gpu][many]") {
  nf::set_default_device(kGpu);
  // The first product allocates the device's cuBLASLt workspace, which it
  // keeps for the life of the process: made before the count starts.
  nf::Array(nf::dot(nf::randn({8, 8}), nf::randn({8, 8})));
  const nf::cuda::MemoryStats before = settled();
  {
    const std::vector<nf::Shape> shapes = {{33, 65}, {128, 784}, {7, 1001}, {64, 64}};
    std::vector<nf::Array> xs, ws;
    for (const nf::Shape& s : shapes) {
      xs.push_back(nf::randn(s));
      ws.push_back(nf::randn({s[1], 17}));
    }
    nf::Array square = nf::randn({64, 64});
    std::size_t in_use_after_warm_up = 0;
    for (int i = 0; i < 10000; ++i) {
      nf::Array& x = xs[i % xs.size()];
      const std::int64_t rows = x.shape()[0];
      switch (i % 6) {
        case 0:  // a reduction in place
          x = (x - nf::mean(x, 1)) / nf::sqrt(nf::var(x, 1) + 1e-5f);
          break;
        case 1:  // an update that reads its target transposed: a detour through a temporary
          square += square.T();
          square = square * 0.5f;
          break;
        case 2: {  // several outputs, dropped at once
          auto [m, v] = nf::eval(nf::mean(x, 0), nf::var(x, 0));
          x = x - m;
          break;
        }
        case 3: {  // overlapping rows of one array
          if (rows > 1) {
            x(nf::slice(1, rows), nf::all) = x(nf::slice(0, rows - 1), nf::all) * 0.5f;
          }
          break;
        }
        case 4: {  // a product and a temporary between two kernels
          const nf::Array h = nf::relu(nf::dot(x, ws[i % ws.size()]));
          x = x * nf::tanh(nf::sum(h, 1) * 1e-3f);
          break;
        }
        case 5: {  // a reshape of a transpose: a copy, then a view
          const nf::Array t = x.T().reshape({-1});
          x = x + nf::mean(t) * 1e-3f;
          break;
        }
      }
      if (i == 999) in_use_after_warm_up = settled().bytes_in_use;
    }
    // The same arrays are live: the statements left nothing behind.
    CHECK(settled().bytes_in_use == in_use_after_warm_up);
    for (const nf::Array& x : xs) CHECK(std::isfinite(nf::sum(x).item<float>()));
  }
  const nf::cuda::MemoryStats after = settled();
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.live_allocations == before.live_allocations);
}

TEST_CASE("a statement that cannot allocate throws OutOfMemory and changes nothing", "[gpu]") {
  nf::set_default_device(kGpu);
  // Each is small; their broadcast sum has 2^40 elements, 4 TiB of f32.
  const nf::Array col = nf::rand({1 << 20, 1}), row = nf::rand({1, 1 << 20});
  nf::Array a = nf::randn({2, 3});
  const std::vector<float> a_was = a.to_vector<float>();
  const nf::cuda::MemoryStats before = settled();
  const std::string asked = std::to_string(std::uint64_t(1) << 42) + " bytes";
  auto check_message = [&](const nf::OutOfMemory& e) {
    INFO(e.what());
    CHECK_THAT(e.what(),
               Catch::Contains(asked) && Catch::Contains("free") && Catch::Contains("cuda:0"));
  };
  // The output itself, then a temporary inside a statement (a reshape of a
  // computed value needs it in memory).
  try {
    const nf::Array big = col + row;
    FAIL("allocated 4 TiB");
  } catch (const nf::OutOfMemory& e) {
    check_message(e);
  }
  try {
    a = a + nf::sum(nf::reshape(col + row, {-1}));
    FAIL("allocated 4 TiB");
  } catch (const nf::OutOfMemory& e) {
    check_message(e);
  }
  CHECK(a.to_vector<float>() == a_was);
  CHECK(settled().bytes_in_use == before.bytes_in_use);
  // The next statement runs.
  a = a * 2;
  std::vector<float> doubled = a_was;
  for (float& v : doubled) v *= 2;
  CHECK(a.to_vector<float>() == doubled);
}
