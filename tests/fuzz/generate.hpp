// Random statements: case `index` of `seed` is always the same statement.
#pragma once

#include <cstdint>

#include "statement.hpp"

namespace nf::fuzz {

struct GenerateOptions {
  bool products = false;  // matrix products with epilogues (GPU mode only)
};

Statement generate(std::uint64_t seed, std::uint64_t index, const GenerateOptions& options);

}  // namespace nf::fuzz
