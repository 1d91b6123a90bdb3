// Whether a result matches its reference within the tolerance of its dtype.
#pragma once

#include <string>

#include <numfuse/numfuse.hpp>

namespace nf::fuzz {

struct Tolerance {
  bool exact = false;  // integers, bool, indices
  double rel = 0;      // |got - want| <= rel * (|want| + scale)
  // The scale is the largest |want|, or this when larger: the largest |value|
  // the statement reads, since terms that cancel (x - mean(x)) leave errors
  // of their own size in a result near zero.
  double magnitude = 0;
};

// The tolerance for a result of dtype t computed through `depth` ops.
Tolerance tolerance(DType t, int depth);

// Empty when `got` matches `want` (same dtype and shape; NaN where NaN,
// infinities equal, finite values within tol); else a report naming the
// first elements that do not.
std::string compare(const Array& got, const Array& want, const Tolerance& tol);

// Checks that compare() catches deliberately perturbed results; prints what
// it checks and returns whether all passed.
bool self_test();

}  // namespace nf::fuzz
