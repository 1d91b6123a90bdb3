// Hostile calls: random shapes (negative, zero, huge, overflowing), dtypes,
// scalar values (out of range, NaN, infinities), axes, indices, writes into
// broadcast views and environment values. A case passes when its call either
// works and gives what numpy would, or throws one of numfuse's user errors
// (never InternalError, never another exception, never a crash) and leaves
// every array as it was.
#pragma once

#include <cstdint>
#include <string>

#include "run_case.hpp"

namespace nf::fuzz {

// Case `index` of `seed`; `code` receives the call as C++.
Outcome run_misuse_case(std::uint64_t seed, std::uint64_t index, std::string* code,
                        const std::string& self);

// The child of an environment case: one statement under the environment it
// was given. Exits 0 when it ran or threw a user error, 1 otherwise.
int run_environment_probe();

}  // namespace nf::fuzz
