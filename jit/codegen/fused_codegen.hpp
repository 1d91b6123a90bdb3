// A fused elementwise step of a plan -> readable CUDA source for one kernel.
#pragma once

#include <string>
#include <vector>

#include "plan/schedule.hpp"

namespace nf::jit {

// How a kernel reaches an array: element i of the domain (flat), one element
// for every i (scalar), or through strides over the domain's coordinates.
enum class Access : std::uint8_t { flat, scalar, strided };

struct OperandSpec {
  DType dtype;
  Access access;
};

struct FusedSpec {
  const Program* program = nullptr;
  const Schedule* plan = nullptr;
  const Step* step = nullptr;
  std::vector<OperandSpec> reads;   // one per step->reads
  std::vector<OperandSpec> writes;  // one per step->writes
  bool index64 = false;             // 64-bit indices (a domain or offsets past 2^31)
  int vector_width = 1;             // elements per thread and load on the flat path
  int unroll = 1;                   // vector groups each thread loads before computing
};

// One kernel parameter, in launch order.
struct KernelParam {
  enum class Kind : std::uint8_t {
    output,   // pointer to write `index`
    input,    // pointer to read `index`
    scalar,   // value of constant node `index`, in the compute type of `dtype`
    seed,     // seed of random node `index` (u64)
    stream,   // stream of random node `index` (u64)
    count,    // number of elements in the domain (nf_idx)
    dims,     // the domain's shape (nf_dims<rank>)
    strides,  // strides of operand `index` (reads first, then writes) over the domain
  };
  Kind kind;
  int index;
  DType dtype = f32;
};

struct GeneratedKernel {
  std::string name;       // nf_fused_<16 hex digits of the signature's hash>
  std::string signature;  // everything structural about the kernel, nothing else
  std::string source;     // prelude + kernel, ready for NVRTC
  std::vector<KernelParam> params;
  int rank = 0;
  bool strided = false;  // whether the kernel computes coordinates
  int per_thread = 1;    // elements a thread handles per loop trip: the grid divides by it
};

// Everything but the source: cheap enough for every launch.
GeneratedKernel describe_fused(const FusedSpec& spec);
// The kernel with its source, for compilation and inspection.
GeneratedKernel generate_fused(const FusedSpec& spec);

// The C type a value of dtype t is computed in on the GPU.
const char* compute_ctype(DType t);

}  // namespace nf::jit
