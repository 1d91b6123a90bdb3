// A statement written in a file, for `numfuse inspect --expr-file`: the
// kernels of a line of numfuse can be read without writing a program.
//
//   # layer norm of every row
//   A: f32[8192, 8192]
//   A = reciprocal(sqrt(var(A, 1) + 1e-5)) * (A - mean(A, 1))
//
// `name: dtype[d0, d1, ...]` declares an input array (it holds no data).
// `name = expression` names an expression, later lines may use it. A line that
// is an expression alone is a result of the statement; without such lines the
// last named expression is the result. Expressions are C++-like: + - * / %,
// unary -, comparisons, parentheses, numbers (weak scalars, as C++ scalars
// are), and calls of numfuse's ops by name: elementwise ops of any arity
// (exp(x), where(c, a, b)), reductions with their axes (mean(A, 1),
// sum(A, 0, 1), max(A) over all), dot(a, b) and transpose(a). `#` starts a
// comment.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "numfuse/expr.hpp"

namespace nf::tools {

// The results of the statement in `text`. Throws nf::ValueError naming
// `origin`, the line and the column of what is wrong, and the errors that
// building the expression raises (nf::ShapeError, nf::DTypeError).
std::vector<Expr> parse_statement(const std::string& text, const std::string& origin);

std::vector<Expr> read_statement_file(const std::filesystem::path& path);

}  // namespace nf::tools
