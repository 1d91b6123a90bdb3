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

// The tiles the permuted-tiles walk stages through shared memory: up to
// 1024 elements, 4096 where every array has 2-byte elements or fewer, so
// that a tile's fixed costs (finding its place, two barriers) are spread over
// as many bytes. Along the permuted view's contiguous dim (the tile's edge)
// at least 8, a sector of 4-byte elements; along the last (its length) at
// least a warp and at most a block, which takes it a row at a time.
// A fused kernel's block (GeneratedKernel::threads) takes a tile.
constexpr int kTileThreads = 256;
constexpr int kTileElements = 1024;
constexpr int kNarrowTileElements = 4096;
constexpr int kMinTileEdge = 8;
constexpr int kMinTileLength = 32;
constexpr int kMaxTileLength = 256;
// 2-byte tiles only where the output steps this many elements or more along
// the permuted dim (fused_spec.cpp).
constexpr int kNarrowTileMinStep = 512;

// The grid of tiles of a spec with a tile_dim: walk_dims with that dim
// counted in tile edges and the last in tile lengths.
Shape tile_grid(const FusedSpec& spec);

FusedSpec make_fused_spec(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs);

}  // namespace nf::jit
