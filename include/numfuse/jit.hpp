// Inspecting what numfuse will run: the kernels a statement plans, their
// CUDA source, and the bytes they move. Works with or without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "numfuse/expr.hpp"

namespace nf {

// The plan of one statement: its steps in order.
class Plan {
 public:
  int kernel_count() const;                  // generated kernels
  int gemm_count() const;                    // matrix products (cuBLAS on a GPU)
  std::vector<std::string> sources() const;  // CUDA source of each generated kernel
  // One line per step: what it reads and writes, and the bytes it moves.
  std::string to_string() const;

  struct Impl;
  explicit Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Plans the statement `nf::eval(roots...)` without running it.
Plan plan(const std::vector<Expr>& roots);

// The CUDA source the statement `Array r = e;` runs (kernels separated by a
// blank line).
std::string kernel_source(const Expr& e);

// The GPU architecture kernels are generated for where no GPU decides it:
// inspection, and the kernel manifest the CPU backend records
// (NF_KERNEL_MANIFEST). NF_TARGET_ARCH sets it at start, "sm_90" by default.
// Throws ValueError for anything but sm_ and a number ("sm_80", "sm_90a").
void set_target_arch(const std::string& arch);
std::string target_arch();

// What this process's kernel cache has done. After `numfuse warmup`, a
// program whose kernels are all in the disk cache keeps nvrtc_compiles at 0.
struct KernelCacheStats {
  std::uint64_t nvrtc_compiles = 0;  // kernels NVRTC compiled, failures included
  double nvrtc_ms = 0;               // the time those compilations took
  std::uint64_t disk_loads = 0;      // kernel images read from the disk cache
};
KernelCacheStats kernel_cache_stats();

}  // namespace nf
