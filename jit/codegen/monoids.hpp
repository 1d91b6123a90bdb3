// The monoids of jit/runtime/nf_reduce.h by TermKind, for host code: the
// CPU backend accumulates through them and the generator sizes its
// workspaces by their accumulator types, so that both take a term's meaning
// from the one definition the kernels use.
#pragma once

#include <cstddef>
#include <string>

#include "graph/op_table.hpp"
#include "numfuse/dtype.hpp"
#include "runtime/nf_reduce.h"

namespace nf::jit {

// f(M{}) where M is term k's monoid, nf_<name>_term.
template <class F>
decltype(auto) with_monoid(TermKind k, F&& f) {
  switch (k) {
#define NF_TERM(name, centre) \
  case TermKind::name:        \
    return f(nf_##name##_term{});
#include "graph/ops.def"
  }
  return f(nf_sum_term{});  // not reached: every TermKind has a row
}

// The monoid's name in generated code.
std::string monoid_name(TermKind k);

// Bytes of term k's accumulator over elements of dtype t (halves compute in
// f32).
std::size_t accumulator_bytes(TermKind k, DType t);

}  // namespace nf::jit
