// A fuzzed statement as data: its input arrays (host values), the views it
// reads them through, its expression DAG and what it assigns. The same
// statement is built on any device from the same values, and printed as the
// numfuse C++ code that writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "ops.hpp"

namespace nf::fuzz {

struct Input {
  DType dtype;
  Shape shape;
  Domain domain;
  std::vector<double> values;  // C order, exact in dtype
};

struct SliceSpec {
  std::int64_t start, stop, step;
};

// How an expression reads an input: sliced on every axis (when `slices` is
// not empty), then permuted (when `perm` is not empty; `T` prints it as .T()).
struct View {
  std::vector<SliceSpec> slices;
  std::vector<int> perm;
  bool T = false;
};

struct Term {
  enum class Kind { leaf, scalar, elementwise, reduction, cast, product, take } kind = Kind::leaf;
  int input = -1;                   // leaf
  View view;                        // leaf
  double value = 0;                 // scalar
  DType scalar_type = f64;          // scalar: bool_ (a bool), i64 (an int) or f64 (a double)
  std::string op;                   // elementwise, reduction; product: dot or matmul
  std::vector<int> args;            // terms
  bool all_axes = true;             // reduction
  std::vector<int> axes;            // reduction
  int ddof = 0;                     // reduction
  DType to = f32;                   // cast
  int axis = 0;                     // take: args are the array and the indices
  TakeMode mode = TakeMode::raise;  // take
};

struct Statement {
  enum class Kind {
    assign,  // nf::Array r = e;
    eval,    // auto [r0, r1, ...] = nf::eval(e0, e1, ...);
    update,  // target op= e;
    write,   // target = e; through a view of an input
  } kind = Kind::assign;
  std::vector<Input> inputs;
  std::vector<Term> terms;
  std::vector<int> roots;
  int target = -1;   // update, write: the input assigned
  View target_view;  // update, write: the view of it assigned
  char op = '+';     // update: + - * /
  int depth = 0;     // ops on the longest path, for tolerances
  bool products = false;
};

// The arrays of the statement's inputs on `device`, from their values.
std::vector<Array> make_inputs(const Statement& s, Device device);
Array apply(const View& v, const Array& a);
// The roots' expressions over `inputs`.
std::vector<Expr> build(const Statement& s, const std::vector<Array>& inputs);
Expr build_term(const Statement& s, const std::vector<Array>& inputs, int term,
                std::vector<std::optional<Expr>>& memo);
// Runs the statement through the public API; returns the arrays it wrote:
// the results, or the whole input an update or write assigned.
std::vector<Array> run(const Statement& s, const std::vector<Array>& inputs);

// The statement as C++.
std::string to_cpp(const Statement& s);
std::string to_cpp(const View& v);

}  // namespace nf::fuzz
