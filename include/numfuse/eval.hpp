// Evaluating several expressions in one statement: they are planned together,
// so shared subexpressions are computed once.
#pragma once

#include <array>
#include <vector>

#include "numfuse/array.hpp"
#include "numfuse/expr.hpp"

namespace nf {

std::vector<Array> eval(const std::vector<Expr>& roots);

// auto [p2, m2, v2] = nf::eval(p - lr * m2e, m2e, v2e);
template <class... E>
std::array<Array, sizeof...(E)> eval(const E&... roots) {
  std::vector<Array> v = eval(std::vector<Expr>{Expr(roots)...});
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Array, sizeof...(E)>{std::move(v[I])...};
  }
  (std::index_sequence_for<E...>{});
}

}  // namespace nf
