// Statements and small helpers the code-generation tests share.
#pragma once

#include <string>

#include <numfuse/numfuse.hpp>

namespace nf::test {

// The mission line: layer normalisation of every row.
inline Expr layernorm(const Expr& a) {
  const float eps = 1e-5f;
  return reciprocal(sqrt(var(a, 1) + eps)) * (a - mean(a, 1));
}

inline Expr softmax(const Expr& a) {
  return exp(a - max(a, 1)) / sum(exp(a - max(a, 1)), 1);
}

// Random values in [1, 5) of dtype t: never zero, exact in every dtype's range.
inline Array filled(const Shape& shape, DType t) {
  return Array(astype(rand(shape, f64) * 4 + 1, t));
}

// How often `what` occurs in `s`.
inline int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace nf::test
