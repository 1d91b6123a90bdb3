// NVRTC: complete CUDA translation units to cubin (or PTX) for one arch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nf::jit {

// What a module is loaded from. `arch` is the target NVRTC compiled for:
// "sm_90" for a cubin, "compute_120" for PTX, which is text ending in its NUL
// (the loaders take it as a C string) and which the driver JIT-compiles.
struct KernelImage {
  std::string arch;
  bool cubin = false;
  std::vector<char> data;
};

// Compiles `source` for the device arch `arch` ("sm_80", "sm_90a", ...): a
// cubin when this NVRTC supports the arch, else PTX for the newest virtual arch
// it supports that the device can run. Throws nf::CompileError carrying the
// source and the NVRTC log when NVRTC rejects the source or cannot target the
// device at all. Thread-safe.
KernelImage compile(const std::string& source, const std::string& arch);

// The PTX NVRTC makes of `source` for the virtual arch of `arch` (sm_90 ->
// compute_90), as text: what `numfuse inspect --ptx` shows. Throws as
// compile() does.
std::string compile_ptx(const std::string& source, const std::string& arch);

// Whether `arch` names a real GPU architecture as users write it: "sm_",
// two or three digits, and at most one lower-case letter ("sm_80", "sm_90a").
bool is_device_arch(const std::string& arch);

// The name of the first __global__ function in `source` ("nf_fused_..."),
// or "kernel" where there is none.
std::string kernel_name_of(const std::string& source);

// "sm_90a", "sm_90" or "compute_90" -> 90.
int arch_number(const std::string& arch);

// "major.minor" of the NVRTC library loaded, e.g. "13.0".
std::string nvrtc_version();

// The real archs this NVRTC emits cubins for, ascending (75, 80, ..., 121).
std::vector<int> nvrtc_supported_archs();

// Exactly the options compile(source, arch) passes to NVRTC.
std::vector<std::string> compile_options(const std::string& arch);

// NVRTC compilations by this process (failed ones included) and the time they
// took; a warm disk cache keeps `compiles` at zero.
struct CompileStats {
  std::uint64_t compiles = 0;
  double ms = 0;
};
CompileStats compile_stats();

}  // namespace nf::jit
