// numfuse info: what this machine gives numfuse, and where its kernels go.
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "compile/disk_cache.hpp"
#include "compile/manifest.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/config.hpp"
#include "cpu/blas.hpp"
#include "cpu/thread_pool.hpp"
#include "cuda/devices.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/jit.hpp"
#include "tools/cache_access.hpp"
#include "tools/commands.hpp"

namespace nf::tools {
namespace {

// The arch kernels are compiled for here: the first GPU's, else the target.
std::string arch_here() {
  return cuda::device_count() > 0 ? cuda::device_info(0).arch() : target_arch();
}

void print_cache() {
  const std::filesystem::path dir = jit::cache_dir_from(jit::CacheEnvironment::current());
  if (dir.empty()) {
    std::printf("kernel cache:    off (NF_CACHE)\n");
    return;
  }
  if (!std::filesystem::is_directory(dir)) {
    std::printf("kernel cache:    %s (not created yet)\n", dir.c_str());
    return;
  }
  const jit::DiskCache cache(dir, jit::Warnings::off);
  if (!cache.enabled()) {
    std::printf("kernel cache:    %s, unusable: %s\n", dir.c_str(),
                cache.disabled_reason().c_str());
    return;
  }
  const std::vector<jit::DiskCache::Entry> entries = cache.entries();
  const std::uintmax_t bytes = std::accumulate(
      entries.begin(), entries.end(), std::uintmax_t{0},
      [](std::uintmax_t sum, const jit::DiskCache::Entry& e) { return sum + e.bytes; });
  std::printf("kernel cache:    %s, %zu entries, %s%s\n", dir.c_str(), entries.size(),
              human_bytes(bytes).c_str(), cache.writable() ? "" : ", read-only");
  if (!cache.writable()) std::printf("                 (%s)\n", cache.read_only_reason().c_str());
}

// What the CPU backend's products run on.
void print_blas() {
  try {
    const cpu::Blas& b = cpu::blas();
    std::printf("CPU BLAS:        %s (%s), %s kernels chosen by %s, ", b.version.c_str(),
                b.library.c_str(), b.kernels.c_str(), b.chosen_by.c_str());
    if (b.tiled) {
      std::printf("tiles of each product on numfuse's %d threads\n", cpu::thread_count());
    } else {
      std::printf("%d threads per call (OPENBLAS_NUM_THREADS)\n", b.threads);
    }
  } catch (const Error& e) {
    std::printf("CPU BLAS:        none: %s\n", e.what());
  }
}

bool all_allowed() {
  for (const config::Variable& v : config::variables()) {
    if (!config::inspect(v.id).error.empty()) return false;
  }
  return true;
}

// Each NF_* variable, its value and where the value came from.
void print_variables() {
  std::printf("environment:\n");
  for (const config::Variable& v : config::variables()) {
    const config::Setting s = config::inspect(v.id);
    if (s.source == config::Source::unset) {
      std::printf("  %-19s %s (default)\n", v.name, v.when_unset);
    } else if (s.error.empty()) {
      std::printf("  %-19s %s (environment)\n", v.name, s.value.c_str());
    } else {
      std::printf("  %-19s %s (environment) NOT ALLOWED: expected %s\n", v.name, s.value.c_str(),
                  v.allowed);
    }
  }
}

int run(const CommandLine& line) {
  if (line.has("--arch")) {
    std::printf("%s\n", arch_here().c_str());
    return 0;
  }
  const std::vector<int> archs = jit::nvrtc_supported_archs();
  std::printf("numfuse %s\n", NF_VERSION);
  std::printf("CUDA:            runtime %s, driver %s\n", cuda::runtime_version().c_str(),
              cuda::driver_version().c_str());
  std::printf("NVRTC:           %s, cubins for sm_%d to sm_%d\n", jit::nvrtc_version().c_str(),
              archs.front(), archs.back());
  std::printf("devices:         %d\n", cuda::device_count());
  for (int d = 0; d < cuda::device_count(); ++d) {
    const cuda::DeviceInfo& info = cuda::device_info(d);
    std::printf("  cuda:%d  %s, %s, %d SMs, %s\n", d, info.name.c_str(), info.arch().c_str(),
                info.sm_count, human_bytes(info.total_bytes).c_str());
  }
  print_blas();
  // numfuse refuses to run with a value it does not allow, so what it would
  // do with them is no question: the table below shows which to fix.
  const bool allowed = all_allowed();
  if (allowed) {
    std::printf("target arch:     %s (%s)\n", arch_here().c_str(),
                cuda::device_count() > 0 ? "cuda:0" : "no GPU: NF_TARGET_ARCH, else sm_90");
    print_cache();
    const std::filesystem::path& manifest = jit::manifest_path();
    std::printf("kernel manifest: %s\n", manifest.empty()
                                             ? "not recording (set NF_KERNEL_MANIFEST=path)"
                                             : manifest.c_str());
  } else {
    std::printf(
        "target arch, kernel cache, kernel manifest: unknown, as the environment has\n"
        "                 values numfuse does not allow (below)\n");
  }
  print_variables();
  if (!allowed) {
    std::fprintf(stderr, "numfuse info: an NF_* variable has a value numfuse does not allow\n");
    return 1;
  }
  return 0;
}

}  // namespace

Command info_command() {
  return {
      "info",
      "devices, CUDA/NVRTC versions, target arch, kernel cache",
      "usage: numfuse info [--arch]\n"
      "\n"
      "Prints the devices numfuse sees, the CUDA runtime, driver and NVRTC\n"
      "versions, the arch kernels are compiled for here (the first GPU's, else\n"
      "NF_TARGET_ARCH, else sm_90), the kernel cache directory with its entries\n"
      "and size (and whether it is read-only), where the kernel manifest is\n"
      "recorded, and each NF_* variable with its value and where that came from\n"
      "(default or environment). Exits with 1 when a variable's value is not one\n"
      "numfuse allows.\n"
      "\n"
      "  --arch   print only the arch, e.g. for `numfuse warmup --arch $(numfuse info --arch)`\n",
      {},
      {"--arch"},
      0,
      run};
}

}  // namespace nf::tools
