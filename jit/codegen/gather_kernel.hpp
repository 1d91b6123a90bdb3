// A gather step of a plan (numpy's take) -> readable CUDA source for one
// kernel: a thread per element of the output (or per vector of up to 16
// bytes along its last dim, where rows lie contiguous and aligned), which
// finds its coordinates, reads the index there and copies the element (the
// vector) of the array it names.
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
  // Elements a thread moves with one load and one store: a vector along the
  // last dim, where that dim is not the indices' and every row of the array
  // and of the output starts on a vector's boundary; else 1.
  int vector = 1;
  // The domain, the array's and the indices' strides over it and the
  // output's, all counted in vectors (the last dim in vectors too).
  Shape domain;
  GatherMap map;
  Strides out_strides;
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
