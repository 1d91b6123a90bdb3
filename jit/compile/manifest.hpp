// The kernel manifest: with NF_KERNEL_MANIFEST=path, a process appends every
// kernel it plans to `path`, so that `numfuse warmup` can compile them into
// the disk cache ahead of time, on a machine without a GPU if need be. On a
// GPU the kernels are those the device's arch needs; on the CPU backend they
// are generated for nf::target_arch() (NF_TARGET_ARCH), as a GPU of that arch
// would plan them.
//
// The file is text, readable and easy to diff: one record per distinct
// kernel (arch and source), however many runs record into it, and the device
// runtime every kernel's source starts with (some 45 KB) once, in a record
// before the first kernel that uses it:
//
//   numfuse-runtime 2
//   runtime-xxh64: <16 hex digits of XXH3-64 of the runtime>
//   source-bytes: <N>
//   <N bytes: jit/runtime, as runtime_prelude() gives it>
//   <an empty line>
//
//   numfuse-kernel 2
//   name: nf_fused_3f2a9c0d11e4b6a7
//   arch: sm_90
//   signature: <the kernel's structural signature, one line>
//   runtime-xxh64: <the runtime the source starts with, or "none">
//   source-xxh64: <16 hex digits of XXH3-64 of the whole source, runtime included>
//   source-bytes: <N>
//   <N bytes of CUDA source, after the runtime>
//   <an empty line>
//
// Records of version 1 ("numfuse-kernel 1", no runtime-xxh64 line, the whole
// source inline) are still read. Each append happens under an exclusive
// lock, after reading what other processes appended since, so several
// processes may record into one manifest and none repeats a kernel.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nf::jit {

struct ManifestEntry {
  std::string name;       // the kernel's name: nf_fused_..., nf_reduce_..., nf_gather_...
  std::string arch;       // the arch the source was generated for: "sm_90"
  std::string signature;  // what the in-memory kernel table keys it by
  std::string source;
  // Read back: whether the source matches the hash recorded with it.
  bool intact = true;
};

// NF_KERNEL_MANIFEST, read once; empty when unset.
const std::filesystem::path& manifest_path();
inline bool manifest_on() {
  return !manifest_path().empty();
}

// Appends `entry` to manifest_path() unless this process already recorded
// the same source for the same arch. Never throws for I/O trouble: the first
// failure warns and stops recording.
void record_kernel(const ManifestEntry& entry);

// Appends `entry` to `path` (with the runtime record, where the file has
// none yet) unless the file already holds its arch and source; returns
// whether it did. Throws nf::Error naming the file when it cannot be written
// or is not a manifest.
bool append_manifest(const std::filesystem::path& path, const ManifestEntry& entry);

// 16 hex digits of XXH3-64 over `source`.
std::string source_hash(const std::string& source);

// Every record of the manifest at `path`, in order; a record whose source
// does not match its hash comes back with intact == false. Throws
// nf::ValueError naming the file and line where it is not a manifest.
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& path);

}  // namespace nf::jit
