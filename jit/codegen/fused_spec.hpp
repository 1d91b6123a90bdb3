// Choosing how a fused kernel reaches its arrays, from their layouts: flat,
// vectorised loads where every array is contiguous and aligned; strides where
// one is a view; 64-bit indices where 32 bits do not reach. The first walk
// (fused_walk.hpp) that applies takes the step.
#pragma once

#include <optional>
#include <vector>

#include "codegen/fused_codegen.hpp"
#include "plan/memory_layout.hpp"

namespace nf::jit {

// The layout a step writes node `i` to: a root's output array, else its own.
Layout write_layout(const Schedule& s, int i, const std::vector<std::optional<Layout>>& layouts,
                    const std::vector<Array>& outputs);

FusedSpec make_fused_spec(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs);

}  // namespace nf::jit
