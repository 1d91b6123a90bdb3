// The C types values compute in (jit/runtime/nf_defs.h), for host code
// templated on them: the CPU backend's evaluators and the sizes of the
// reductions' accumulators.
#pragma once

#include "numfuse/dtype.hpp"
#include "runtime/nf_defs.h"

namespace nf {

// Calls f(tag) with a value of the C type a value of dtype `t` computes in:
// nf_b8, nf_u8, nf_i32, nf_i64, nf_f64, and nf_f32 for f32 and the halves.
template <class F>
decltype(auto) visit_ctype(DType t, F&& f) {
  switch (t) {
    case DType::b8:
      return f(nf_b8{});
    case DType::u8:
      return f(nf_u8{});
    case DType::i32:
      return f(nf_i32{});
    case DType::i64:
      return f(nf_i64{});
    case DType::f64:
      return f(nf_f64{});
    default:
      return f(nf_f32{});
  }
}

}  // namespace nf
