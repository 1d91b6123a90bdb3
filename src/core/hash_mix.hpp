// One step of the 64-bit word hash used for structural hashes and statement
// keys: cheap enough to run per node built. Every user confirms a match by
// comparing what it hashed, so collisions cost time, never results.
#pragma once

#include <cstdint>

namespace nf {

constexpr std::uint64_t kHashSeed = 0x2545F4914F6CDD1DULL;

inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t word) {
  h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
  return h ^ (h >> 29);
}

}  // namespace nf
