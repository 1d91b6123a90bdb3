// The bytes of one disk cache entry: a header that lets a reader reject
// anything truncated, corrupt or misplaced, then the kernel image.
//
//   offset  size  field
//        0     8  magic "NFKERNEL"
//        8     4  entry format version (kEntryFormatVersion)
//       12     4  flags: bit 0 set for a cubin, clear for PTX; no other bits
//       16     8  XXH3-64 of every byte from offset 24 to the end
//       24     8  payload size
//       32     2  arch length, then the arch ("sm_90", "compute_120")
//              2  key length, then the key the entry was stored under
//              4  source length, then the CUDA source the image was compiled
//                 from, kept for `numfuse inspect` and `numfuse cache list`
//                 payload
//
// Integers are little-endian. The checksum covers the header fields after it
// as well as the payload, so a flipped bit anywhere is caught.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compile/nvrtc_compiler.hpp"

namespace nf::jit {

// Part of every cache key too: a new format never meets files of an old one.
inline constexpr unsigned kEntryFormatVersion = 2;

// What an entry holds: the image and the source it was compiled from.
struct StoredKernel {
  KernelImage image;
  std::string source;
};

std::vector<char> encode_entry(const std::string& key, const StoredKernel& kernel);

// The kernel in `bytes`, unless they are not exactly an entry of this format
// stored under `key`: then what is wrong with them ("truncated (7 bytes)").
std::variant<StoredKernel, std::string> decode_entry(const std::string& key,
                                                     const std::vector<char>& bytes);

}  // namespace nf::jit
