// Whether a C++ scalar may become a value of a dtype, decided as numpy 2
// decides for Python scalars (NEP 50): `nf::full({3}, 300, nf::u8)` and
// `u8_array + 300` raise where numpy raises, rather than wrap. Conversions of
// array elements (astype) never raise; their rules are jit/runtime/nf_cast.h.
#pragma once

#include <cstdint>
#include <string>

#include "numfuse/dtype.hpp"

namespace nf {

// An integer scalar must lie in an integer dtype's range (bool and floating
// dtypes take any integer). Throws ValueError naming `op`, `v` and `t`.
void check_int_fits(std::int64_t v, DType t, const std::string& op);
// A floating scalar bound for an integer dtype must be finite and its
// truncation in range. Throws ValueError naming `op`, `v` and `t`.
void check_float_fits(double v, DType t, const std::string& op);

}  // namespace nf
