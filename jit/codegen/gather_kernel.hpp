// A gather step of a plan (numpy's take) -> readable CUDA source for one
// kernel: a thread per element of the output, which finds its coordinates,
// reads the index there and copies the element of the array it names.
#pragma once

#include <optional>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "plan/gather_map.hpp"
#include "plan/memory_layout.hpp"

namespace nf::jit {

struct GatherSpec {
  const Step* step = nullptr;
  const Node* take = nullptr;
  DType index_dtype = i64;
  GatherMap map;         // the array's and the indices' strides over the domain
  Strides out_strides;   // the output's, over the domain
  bool index64 = false;  // 64-bit indices (a domain or offsets past 2^31)
};

GatherSpec make_gather_spec(const Program& p, const Schedule& s, const Step& step,
                            const std::vector<std::optional<Layout>>& layouts,
                            const std::vector<Array>& outputs);

// Everything but the source: cheap enough for every launch.
GeneratedKernel describe_gather(const GatherSpec& spec);
// The kernel with its source, for compilation and inspection.
GeneratedKernel generate_gather(const GatherSpec& spec);

}  // namespace nf::jit
