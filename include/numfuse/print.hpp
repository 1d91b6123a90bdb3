// Arrays as text, laid out as numpy prints them: nested brackets, columns
// aligned, large arrays summarised with "...", then the dtype and device.
#pragma once

#include <iosfwd>
#include <string>

#include "numfuse/array.hpp"

namespace nf {

// numpy's repr of `a` under its default print options, with numfuse's dtype
// name and the device:
//   array([[1. , 2.5],
//          [3. , 4. ]], dtype=f32, device=cpu)
// Arrays of more than 1000 elements show the first and last 3 entries of each
// longer axis, and only those are copied from the device. Floats print with
// the fewest digits that read back in their own dtype (f16 and bf16
// included), at most 8 after the point.
std::string to_string(const Array& a);

// Writes to_string(a). An Expr prints through Array's converting constructor,
// which evaluates it.
std::ostream& operator<<(std::ostream& os, const Array& a);

}  // namespace nf
