// Statements the benchmarks share, so that each figure times the same work.
#pragma once

#include <numfuse/numfuse.hpp>

namespace bench {

// Eight elementwise ops (x*a+b, sigmoid gate, tanh, square, abs, exp) over one
// array: a statement that fuses into one kernel, cheap enough on a small array
// that its host cost shows.
inline nf::Expr chain(const nf::Array& x, float a, float b) {
  nf::Expr y = x * a + b;
  y = y * nf::sigmoid(y);
  y = nf::tanh(y) * 0.5f + x * x;
  return nf::abs(y - 0.25f) + nf::exp(-x);
}

}  // namespace bench
