// Statements written in a file, for `numfuse inspect --expr-file`: the
// kernels of lines of numfuse can be read without writing a program.
//
//   # layer norm of every row, then the column sums
//   A: f32[8192, 8192]
//   A = reciprocal(sqrt(var(A, 1) + 1e-5)) * (A - mean(A, 1))
//   sum(A, 0)
//
// `name: dtype[d0, d1, ...]` declares an input array (it holds no data).
// Every other line that is not blank is a statement, planned on its own as a
// program runs them: `name = expression` stores the result in `name`, as
// `nf::Array name = expression;` does, so later statements read it from
// memory; an expression alone is evaluated. Expressions are C++-like: + - * / %,
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

struct Statement {
  int line;                   // from 1
  std::string text;           // the line, without its comment
  std::vector<Expr> results;  // what it evaluates
};

// The statements in `text`, in order. Throws nf::ValueError naming `origin`,
// the line and the column of what is wrong, and the errors that building an
// expression raises (nf::ShapeError, nf::DTypeError) with the line's number.
std::vector<Statement> parse_statements(const std::string& text, const std::string& origin);

std::vector<Statement> read_statement_file(const std::filesystem::path& path);

}  // namespace nf::tools
