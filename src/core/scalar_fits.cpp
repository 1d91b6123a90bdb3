#include "core/scalar_fits.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "numfuse/errors.hpp"

namespace nf {
namespace {

struct Range {
  std::int64_t lo, hi;
};

Range range_of(DType t) {
  switch (t) {
    case DType::u8:
      return {0, 255};
    case DType::i32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  }
}

std::string range_text(DType t) {
  const Range r = range_of(t);
  return std::string(name(t)) + " (" + std::to_string(r.lo) + " to " + std::to_string(r.hi) + ")";
}

// The shortest text that reads back as `v`: 300, not 300.000000.
std::string shortest(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::string(text, end);
}

}  // namespace

void check_int_fits(std::int64_t v, DType t, const std::string& op) {
  if (!is_integral(t)) return;
  const Range r = range_of(t);
  if (v < r.lo || v > r.hi) {
    throw ValueError(op + ": the scalar " + std::to_string(v) + " is out of bounds for " +
                     range_text(t) + "; cast the array to a wider dtype first");
  }
}

void check_float_fits(double v, DType t, const std::string& op) {
  if (!is_integral(t)) return;
  if (!std::isfinite(v)) {
    throw ValueError(op + ": cannot convert " + shortest(v) + " to the integer dtype " +
                     std::string(name(t)));
  }
  // Compared as doubles: 2^63, the first double past i64, is exact.
  const Range r = range_of(t);
  const double whole = std::trunc(v);
  if (whole < double(r.lo) || whole >= double(r.hi) + 1.0) {
    throw ValueError(op + ": the value " + shortest(v) + " is out of bounds for " + range_text(t));
  }
}

}  // namespace nf
