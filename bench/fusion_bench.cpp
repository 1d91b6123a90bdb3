// Fused elementwise kernels against the device's copy bandwidth and against
// running one kernel per op (NF_FUSION=off). Device time by CUDA events,
// after warm-up, median of repeated batches. Prints a table and JSON lines.
//
//   fusion_bench [--quick]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "bench_util.hpp"
#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernels.hpp"
#include "cuda/memory.hpp"
#include "workloads.hpp"

namespace {

using bench::chain;

struct Result {
  std::string work, shape, fw;
  double us, gbps;
};
std::vector<Result> g_results;

void report(const std::string& work, const std::string& shape, const std::string& fw, double us,
            double bytes) {
  const double gbps = bytes / (us * 1e-6) / 1e9;
  g_results.push_back({work, shape, fw, us, gbps});
  std::printf("{\"work\":\"%s\",\"shape\":\"%s\",\"fw\":\"%s\",\"us\":%.2f,\"GBps\":%.1f}\n",
              work.c_str(), shape.c_str(), fw.c_str(), us, gbps);
}

void fused_and_unfused(const std::string& work, const std::string& shape, double bytes,
                       const std::function<void()>& f) {
  report(work, shape, "numfuse", bench::time_us(f), bytes);
  setenv("NF_FUSION", "off", 1);
  report(work, shape, "numfuse-unfused", bench::time_us(f), bytes);
  unsetenv("NF_FUSION");
}

// A generated kernel's name, from the comment that opens it.
std::string kernel_name(const std::string& source) {
  const std::string mark = "numfuse fused kernel ";
  const std::size_t at = source.find(mark) + mark.size();
  return source.substr(at, source.find('\n', at) - at);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (nf::cuda::device_count() == 0) {
    std::puts("fusion_bench: no CUDA device");
    return 77;
  }
  const auto& info = nf::cuda::device_info(0);
  std::printf("device: %s (%s, %d SMs)\n", info.name.c_str(), info.arch().c_str(), info.sm_count);
  nf::seed(1);

  // The ceiling: a device-to-device copy of 256 MiB, bytes read plus written.
  {
    const std::size_t bytes = std::size_t(8192) * 8192 * 4;
    auto a = nf::cuda::allocate_device(0, bytes), b = nf::cuda::allocate_device(0, bytes);
    const double us =
        bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, bytes, 0); });
    report("copy", "(8192, 8192)", "cudaMemcpy", us, 2.0 * bytes);
  }
  {
    nf::Array x = nf::randn({8192, 8192});
    nf::Array y;
    fused_and_unfused("scale_copy", "(8192, 8192)", 2.0 * 4 * x.size(), [&] { y = x * 1.0f; });
  }
  for (auto [r, c] : {std::pair<int, int>{8192, 8192}, {128, 784}}) {
    if (quick && r == 128) continue;
    nf::Array x = nf::randn({r, c});
    nf::Array y;
    const std::string shape = "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
    fused_and_unfused("chain8", shape, 2.0 * 4 * x.size(), [&] { y = chain(x, 1.5f, 0.25f); });
  }
  for (std::int64_t n : {std::int64_t(1) << 26, std::int64_t(1) << 20}) {
    nf::Array p = nf::randn({n}), g = nf::randn({n}), m = nf::randn({n}), v = nf::rand({n});
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    fused_and_unfused("adam", "(" + std::to_string(n) + ",)", 7.0 * 4 * n, [&] {
      nf::Expr m2 = b1 * m + (1 - b1) * g;
      nf::Expr v2 = b2 * v + (1 - b2) * g * g;
      auto out = nf::eval(p - lr * m2 / (nf::sqrt(v2) + eps), m2, v2);
      p = out[0];
      m = out[1];
      v = out[2];
    });
  }

  // Host cost of a statement whose kernel is cached: wall clock per call,
  // and the parts of it: building the expression, and an array's allocation.
  // `y = ...` writes into the buffer y alone holds; "chain8-new-array-wall"
  // makes a new array each call, as `Array t = ...` does.
  {
    nf::Array x = nf::randn({128, 784});
    nf::Array y = chain(x, 1.5f, 0.25f);
    nf::cuda::synchronize(0);
    const auto row = [](const char* work, double us) {
      std::printf("{\"work\":\"%s\",\"shape\":\"(128, 784)\",\"fw\":\"numfuse\",\"us\":%.2f}\n",
                  work, us);
    };
    row("chain8-wall", bench::wall_us([&] { y = chain(x, 1.5f, 0.25f); }));
    row("chain8-new-array-wall", bench::wall_us([&] { nf::Array t = chain(x, 1.5f, 0.25f); }));
    row("chain8-build-only", bench::wall_us([&] { nf::Expr e = chain(x, 1.5f, 0.25f); }));
    row("scale-wall", bench::wall_us([&] { y = x * 2.0f; }));
    row("alloc-free", bench::wall_us([&] { nf::Array t = nf::empty({128, 784}); }));
  }
  // A kernel's first use in a process: NVRTC compiling it (cold), or the
  // disk cache's checked read plus loading the image (warm).
  {
    nf::Array x = nf::randn({128, 784});
    const std::string source = nf::kernel_source(chain(x, 1.5f, 0.25f));
    const std::string arch = info.arch();
    const auto ms_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count();
    };
    auto t0 = std::chrono::steady_clock::now();
    const nf::jit::KernelImage compiled = nf::jit::compile(source, arch);
    const double compile_ms = ms_since(t0);
    nf::jit::DiskCache& disk = nf::jit::DiskCache::instance();
    const std::string key = nf::jit::image_key(source, arch);
    disk.store(key, {compiled, source});
    t0 = std::chrono::steady_clock::now();
    const std::optional<nf::jit::KernelImage> image = disk.load(key);
    const double read_ms = ms_since(t0);
    if (image) {
      t0 = std::chrono::steady_clock::now();
      const nf::cuda::LoadedKernel k = nf::cuda::load_kernel(
          0, image->data.data(), image->data.size(), kernel_name(source).c_str());
      const double load_ms = ms_since(t0);
      nf::cuda::unload_kernel(k);
      std::printf(
          "{\"work\":\"first-use\",\"kernel\":\"chain8\",\"nvrtc_ms\":%.1f,"
          "\"disk_read_ms\":%.3f,\"load_ms\":%.3f}\n",
          compile_ms, read_ms, load_ms);
    } else {
      std::printf(
          "{\"work\":\"first-use\",\"kernel\":\"chain8\",\"nvrtc_ms\":%.1f,"
          "\"disk\":\"off\"}\n",
          compile_ms);
    }
  }
  const auto stats = nf::jit::compile_stats();
  std::printf("{\"work\":\"nvrtc\",\"compiles\":%llu,\"ms_per_compile\":%.1f}\n",
              static_cast<unsigned long long>(stats.compiles),
              stats.compiles ? stats.ms / double(stats.compiles) : 0.0);

  double copy_gbps = 0;
  for (const auto& r : g_results) {
    if (r.work == "copy") copy_gbps = r.gbps;
  }
  std::printf("\n%-12s %-14s %-16s %10s %9s %8s\n", "work", "shape", "fw", "us", "GB/s", "of copy");
  for (const auto& r : g_results) {
    std::printf("%-12s %-14s %-16s %10.2f %9.1f %7.1f%%\n", r.work.c_str(), r.shape.c_str(),
                r.fw.c_str(), r.us, r.gbps, 100 * r.gbps / copy_gbps);
  }
  return 0;
}
