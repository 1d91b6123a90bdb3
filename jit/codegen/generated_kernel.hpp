// A generated kernel as the launcher sees it: its name and signature, its
// source, its parameters in launch order and its launch shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"

namespace nf::jit {

// One kernel parameter, in launch order.
struct KernelParam {
  enum class Kind : std::uint8_t {
    output,     // pointer to write `index`
    input,      // pointer to read `index`
    scalar,     // value of constant node `index`, in the compute type of `dtype`
    seed,       // seed of random node `index` (u64)
    stream,     // stream of random node `index` (u64)
    count,      // number of elements in the domain (nf_idx)
    dims,       // the domain's shape (nf_dims<rank>)
    strides,    // strides of operand `index` (reads first, then writes) over the domain
    extent,     // the values extents[index], as nf_dims<nf_idx, size> (or one nf_idx)
    workspace,  // pointer to scratch memory `index` of the step (workspace_bytes[index])
  };
  Kind kind;
  int index;
  DType dtype = f32;
};

struct GeneratedKernel {
  std::string name;       // see kernel_name
  std::string signature;  // everything structural about the kernel, nothing else
  std::string source;     // prelude + kernel, ready for NVRTC
  std::vector<KernelParam> params;
  std::vector<Strides> extents;  // values of the `extent` parameters
  // Scratch memory the kernels of one step share, in bytes: partial results
  // passed from one kernel to the next.
  std::vector<std::size_t> workspace_bytes;
  std::int64_t blocks = 0;  // the launch: `blocks` of `threads` threads
  int threads = 256;
  // Blocks of a thread block cluster, which the kernel declares itself
  // (__cluster_dims__): `blocks` is a multiple of it.
  int cluster = 1;
  // Each block loops over tiles blockIdx.x, + gridDim.x, ...: `blocks` is the
  // number of tiles, and a launch needs no more blocks than the device runs
  // at once.
  bool loops_over_tiles = false;
  std::size_t shared_bytes = 0;  // dynamic shared memory of a block
};

// A kernel's name: `kind` and 16 hex digits of its signature's hash, so equal
// signatures give equal names.
std::string kernel_name(const char* kind, const std::string& signature);

}  // namespace nf::jit
