// The device runtime of src/cuda: devices and streams, pooled memory and its
// statistics, copies, errors, and loading and launching kernels compiled here
// with NVRTC directly, so that these tests do not depend on jit/.
#include <nvrtc.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cuda/devices.hpp"
#include "cuda/kernels.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"

using namespace nf;
using namespace nf::cuda;

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void nf_test_axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Needs more dynamic shared memory than a kernel gets without opting in.
extern "C" __global__ void nf_test_reverse(const int* x, int* y, int n) {
  extern __shared__ int s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = s[n - 1 - i];
}
)";

// A cubin for `arch` ("sm_90"), or PTX for its virtual architecture.
std::string compile(const std::string& arch, bool cubin) {
  nvrtcProgram program;
  REQUIRE(nvrtcCreateProgram(&program, kSource, "test_runtime.cu", 0, nullptr, nullptr) ==
          NVRTC_SUCCESS);
  const std::string target = "--gpu-architecture=" + (cubin ? arch : "compute_" + arch.substr(3));
  const char* options[] = {target.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(program, log.data());
  INFO(log);
  REQUIRE(compiled == NVRTC_SUCCESS);
  std::size_t size = 0;
  std::string image;
  if (cubin) {
    REQUIRE(nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS);
    image.resize(size);
    REQUIRE(nvrtcGetCUBIN(program, image.data()) == NVRTC_SUCCESS);
  } else {
    REQUIRE(nvrtcGetPTXSize(program, &size) == NVRTC_SUCCESS);  // counts the closing NUL
    image.resize(size);
    REQUIRE(nvrtcGetPTX(program, image.data()) == NVRTC_SUCCESS);
  }
  nvrtcDestroyProgram(&program);
  return image;
}

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

std::shared_ptr<Storage> upload(const void* data, std::size_t bytes) {
  auto s = allocate_device(0, bytes);
  copy_host_to_device(s->data, data, bytes, 0);
  return s;
}

template <class T>
std::vector<T> download(const Storage& s) {
  std::vector<T> v(s.bytes / sizeof(T));
  copy_device_to_host(v.data(), s.data, s.bytes, 0);
  return v;
}

// Axpy's operands over n elements, on the host and the device; the values
// and every sum below are exact in f32.
struct AxpyInputs {
  std::vector<float> x, y;
  std::shared_ptr<Storage> dx, dy;
};

AxpyInputs axpy_inputs(int n) {
  AxpyInputs in{std::vector<float>(n), std::vector<float>(n), nullptr, nullptr};
  for (int i = 0; i < n; ++i) {
    in.x[i] = static_cast<float>(i % 1000);
    in.y[i] = static_cast<float>(-i % 7);
  }
  in.dx = upload(in.x.data(), in.x.size() * sizeof(float));
  in.dy = upload(in.y.data(), in.y.size() * sizeof(float));
  return in;
}

// y = 0.5 x + y over n elements.
std::vector<float> run_axpy(const LoadedKernel& k, int n) {
  const AxpyInputs in = axpy_inputs(n);
  float a = 0.5f;
  void* px = in.dx->data;
  void* py = in.dy->data;
  void* args[] = {&a, &px, &py, &n};
  launch(k, 0, dim3((n + 255) / 256), dim3(256), args, 0);
  return download<float>(*in.dy);
}

void check_axpy(const std::vector<float>& y) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float want = 0.5f * static_cast<float>(i % 1000) + static_cast<float>(-int(i) % 7);
    if (y[i] != want) FAIL("y[" << i << "] = " << y[i] << ", want " << want);
  }
}

}  // namespace

TEST_CASE("device info is sane and streams are one per device", "[gpu]") {
  REQUIRE(device_count() >= 1);
  const DeviceInfo& info = device_info(0);
  CHECK(!info.name.empty());
  CHECK(info.cc_major >= 7);
  CHECK(info.sm_count > 0);
  CHECK(info.l2_bytes > 0);
  CHECK(info.total_bytes > (std::size_t(1) << 30));
  CHECK(info.max_shared_per_block_optin >= 48 * 1024);
  CHECK(info.arch() == "sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor));
  CHECK(&device_info(0) == &info);
  CHECK_THROWS_AS(device_info(-1), ValueError);
  CHECK_THROWS_AS(device_info(device_count()), ValueError);
  CHECK_THROWS_AS(stream(device_count()), ValueError);

  std::vector<cudaStream_t> seen(8);
  std::vector<std::thread> threads;
  for (auto& s : seen) threads.emplace_back([&s] { s = stream(0); });
  for (auto& t : threads) t.join();
  for (auto s : seen) CHECK(s == stream(0));
  CHECK(stream(0) != nullptr);  // not the legacy default stream
  synchronize(0);
}

TEST_CASE("host-device copies round-trip", "[gpu]") {
  const MemoryStats before = memory_stats(0);
  for (std::size_t n : {0, 1, 3, 4097, (1 << 20) + 7}) {
    CAPTURE(n);
    const auto bytes = random_bytes(n, static_cast<unsigned>(n));
    auto s = upload(bytes.data(), n);
    CHECK(s->device == Device{Device::Kind::cuda, 0});
    CHECK(s->bytes == n);
    CHECK((n == 0) == (s->data == nullptr));
    CHECK(memory_stats(0).bytes_in_use == before.bytes_in_use + n);
    CHECK(download<unsigned char>(*s) == bytes);
  }
  CHECK(memory_stats(0).bytes_in_use == before.bytes_in_use);
  CHECK(memory_stats(0).live_allocations == before.live_allocations);
  // Zero-byte buffers take nothing from the pool.
  CHECK(memory_stats(0).total_allocations == before.total_allocations + 4);
  CHECK(memory_stats(0).peak_bytes_in_use >= before.bytes_in_use + (1 << 20) + 7);
}

TEST_CASE("device-to-device copies are ordered on the stream", "[gpu]") {
  const std::size_t n = 1000003;
  const auto bytes = random_bytes(n, 7);
  auto a = upload(bytes.data(), n);
  auto b = allocate_device(0, n);
  copy_device_to_device(b->data, a->data, n, 0);
  CHECK(download<unsigned char>(*b) == bytes);

  // Unaligned ranges: a[1, n-1) to b at 3.
  auto c = allocate_device(0, n + 1);
  const auto zeros = std::vector<unsigned char>(n + 1, 0);
  copy_host_to_device(c->data, zeros.data(), n + 1, 0);
  copy_device_to_device(static_cast<char*>(c->data) + 3, static_cast<const char*>(a->data) + 1,
                        n - 2, 0);
  auto want = zeros;
  std::memcpy(want.data() + 3, bytes.data() + 1, n - 2);
  CHECK(download<unsigned char>(*c) == want);
  copy_device_to_device(nullptr, nullptr, 0, 0);
}

TEST_CASE("memory is reused across many allocations", "[gpu]") {
  const MemoryStats before = memory_stats(0);
  std::mt19937 rng(3);
  std::vector<std::shared_ptr<Storage>> live;
  for (int i = 0; i < 10000; ++i) {
    live.push_back(allocate_device(0, 1 + rng() % (1 << 20)));
    if (live.size() > 16) live.erase(live.begin() + rng() % live.size());
  }
  CHECK(memory_stats(0).live_allocations == before.live_allocations + live.size());
  live.clear();
  synchronize(0);
  const MemoryStats after = memory_stats(0);
  CHECK(after.bytes_in_use == before.bytes_in_use);
  CHECK(after.live_allocations == before.live_allocations);
  CHECK(after.total_allocations == before.total_allocations + 10000);
}

TEST_CASE("a freed block goes to the next request of about its size", "[gpu]") {
  const MemoryStats before = memory_stats(0);
  void* first = allocate_device(0, 1000)->data;
  auto again = allocate_device(0, 1001);  // the same 512-byte pieces
  CHECK(again->data == first);
  CHECK(memory_stats(0).bytes_in_use == before.bytes_in_use + 1001);
  auto other = allocate_device(0, 4000);
  CHECK(other->data != first);
  // What it held before is still there, for work queued after its last use.
  const auto bytes = random_bytes(1001, 5);
  copy_host_to_device(again->data, bytes.data(), bytes.size(), 0);
  CHECK(download<unsigned char>(*again) == bytes);
}

TEST_CASE("running out of device memory throws OutOfMemory", "[gpu]") {
  const std::size_t petabyte = std::size_t(1) << 50;
  try {
    allocate_device(0, petabyte);
    FAIL("allocated a petabyte");
  } catch (const OutOfMemory& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("cuda:0") && Catch::Contains(std::to_string(petabyte) + " bytes"));
  }
  // The failure is not left behind for the next call to report.
  const auto bytes = random_bytes(99, 1);
  CHECK(download<unsigned char>(*upload(bytes.data(), 99)) == bytes);
}

// The pool keeps all freed memory (its release threshold is unlimited); the
// driver must still hand it back when a request does not fit beside it. It
// takes most of the device: [whole-device] tests run alone.
TEST_CASE("memory cached by the pool does not starve a larger request", "[gpu][whole-device]") {
  const std::size_t total = device_info(0).total_bytes;
  allocate_device(0, total / 10 * 6).reset();
  auto big = allocate_device(0, total / 10 * 7);
  CHECK(big->data != nullptr);
}

TEST_CASE("kernels compiled by NVRTC load and launch", "[gpu]") {
  const std::string arch = device_info(0).arch();
  const int n = 1000003;

  SECTION("from a cubin") {
    const std::string cubin = compile(arch, true);
    const LoadedKernel k = load_kernel(0, cubin.data(), cubin.size(), "nf_test_axpy");
    check_axpy(run_axpy(k, n));
    check_axpy(run_axpy(k, 1));
    CHECK(occupancy_blocks(k, 0, 256, 0) >= 1);
    unload_kernel(k);
  }
  SECTION("from PTX, with or without its closing NUL") {
    const std::string ptx = compile(arch, false);
    for (std::size_t size : {ptx.size(), std::strlen(ptx.c_str())}) {
      const LoadedKernel k = load_kernel(0, ptx.data(), size, "nf_test_axpy");
      check_axpy(run_axpy(k, n));
      unload_kernel(k);
    }
  }
  SECTION("with more than 48 KiB of dynamic shared memory") {
    const std::string cubin = compile(arch, true);
    const LoadedKernel k = load_kernel(0, cubin.data(), cubin.size(), "nf_test_reverse");
    int count = 100 * 1024 / sizeof(int);
    std::vector<int> x(count);
    for (int i = 0; i < count; ++i) x[i] = i * 3 + 1;
    auto dx = upload(x.data(), x.size() * sizeof(int));
    auto dy = allocate_device(0, x.size() * sizeof(int));
    void* px = dx->data;
    void* py = dy->data;
    void* args[] = {&px, &py, &count};
    const std::size_t shared = count * sizeof(int);
    CHECK(occupancy_blocks(k, 0, 256, shared) >= 1);
    launch(k, 0, dim3(1), dim3(256), args, shared);
    const auto y = download<int>(*dy);
    for (int i = 0; i < count; ++i) REQUIRE(y[i] == x[count - 1 - i]);
    unload_kernel(k);
  }
  SECTION("many times") {
    const std::string cubin = compile(arch, true);
    for (int i = 0; i < 100; ++i) {
      unload_kernel(load_kernel(0, cubin.data(), cubin.size(), "nf_test_axpy"));
    }
  }
}

TEST_CASE("CUDA errors become CudaError naming the call", "[gpu]") {
  const std::string arch = device_info(0).arch();
  const std::string cubin = compile(arch, true);

  SECTION("a launch the device rejects") {
    const LoadedKernel k = load_kernel(0, cubin.data(), cubin.size(), "nf_test_axpy");
    float a = 1;
    void* p = nullptr;
    int n = 0;
    void* args[] = {&a, &p, &p, &n};
    try {
      launch(k, 0, dim3(1), dim3(4096), args, 0);
      FAIL("launched 4096 threads per block");
    } catch (const CudaError& e) {
      CHECK_THAT(e.what(), Catch::Contains("cuLaunchKernel(nf_test_axpy") &&
                               Catch::Contains("block (4096,1,1)") &&
                               Catch::Contains(") failed: "));
    }
    // The error was not sticky and was cleared: the next launch works.
    check_axpy(run_axpy(k, 1000));
    unload_kernel(k);
  }
  SECTION("a kernel that is not in the image") {
    CHECK_THROWS_WITH(load_kernel(0, cubin.data(), cubin.size(), "nf_missing"),
                      Catch::Contains("cudaLibraryGetKernel(kernel nf_missing for cuda:0)") &&
                          Catch::Contains("cudaErrorSymbolNotFound"));
  }
  SECTION("an image that is not code") {
    // cudaLibraryLoadData takes it; the runtime rejects it when asked for the
    // kernel. Either way the message names the kernel.
    const std::string junk = "this is not PTX";
    CHECK_THROWS_WITH(load_kernel(0, junk.data(), junk.size(), "nf_test_axpy"),
                      Catch::Contains("(kernel nf_test_axpy for cuda:0) failed: "));
  }
  SECTION("a cubin for another architecture fails at load, not at launch") {
    const std::string other = compile(device_info(0).cc_major == 8 ? "sm_90" : "sm_80", true);
    CHECK_THROWS_AS(load_kernel(0, other.data(), other.size(), "nf_test_axpy"), CudaError);
    CHECK_THROWS_WITH(load_kernel(0, other.data(), other.size(), "nf_test_axpy"),
                      Catch::Contains("(kernel nf_test_axpy for cuda:0) failed: ") &&
                          Catch::Contains("cudaErrorNoKernelImageForDevice"));
  }
}

// Parameter values packed as the code generator packs them: one 8-byte word
// each, for cuda::launch's second form, which the submitter's thread makes.
TEST_CASE("launches of packed values run in order, and a failed one names its kernel", "[gpu]") {
  const std::string cubin = compile(device_info(0).arch(), true);
  const LoadedKernel k = load_kernel(0, cubin.data(), cubin.size(), "nf_test_axpy");
  const int n = 3000;
  const AxpyInputs in = axpy_inputs(n);
  const float a = 0.5f;
  std::uint64_t words[4] = {0, reinterpret_cast<std::uintptr_t>(in.dx->data),
                            reinterpret_cast<std::uintptr_t>(in.dy->data), std::uint64_t(n)};
  std::memcpy(&words[0], &a, sizeof a);
  const std::uint32_t slots[4] = {0, 1, 2, 3};
  // Back to back, each reading what the one before wrote: y + 1000 * 0.5 x,
  // exact in f32.
  const int launches = 1000;
  for (int i = 0; i < launches; ++i) {
    launch(k, 0, dim3((n + 255) / 256), dim3(256), words, slots, 0);
  }
  const std::vector<float> got = download<float>(*in.dy);
  for (int i = 0; i < n; ++i) {
    const float want = in.y[i] + launches * 0.5f * in.x[i];
    if (got[i] != want) FAIL("y[" << i << "] = " << got[i] << ", want " << want);
  }

  // Rejected by the driver: thrown by the launch, or, where the submitter's
  // thread made it, by the next wait for the stream.
  for (int i = 0; i < 10; ++i) launch(k, 0, dim3(1), dim3(256), words, slots, 0);
  try {
    launch(k, 0, dim3(1), dim3(4096), words, slots, 0);
    synchronize(0);
    FAIL("launched 4096 threads per block");
  } catch (const CudaError& e) {
    CHECK_THAT(e.what(), Catch::Contains("cuLaunchKernel") &&
                             Catch::Contains("(nf_test_axpy on cuda:0") &&
                             Catch::Contains("block (4096,1,1)") && Catch::Contains(") failed: "));
  }
  // Reported once, and the launches after it run.
  synchronize(0);
  check_axpy(run_axpy(k, 1000));
  unload_kernel(k);
}
