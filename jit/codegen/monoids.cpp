#include "codegen/monoids.hpp"

#include <string>

#include "numfuse/errors.hpp"

namespace nf::jit {

std::string monoid_name(TermKind k) {
  return "nf_" + std::string(term_name(k)) + "_term";
}

std::size_t accumulator_bytes(TermKind k, DType ctype) {
  const auto bytes = [&](auto tag) {
    using T = decltype(tag);
    return with_monoid(k, [](auto m) { return sizeof(typename decltype(m)::template acc<T>); });
  };
  switch (ctype) {
    case DType::b8:
      return bytes(nf_b8{});
    case DType::u8:
      return bytes(nf_u8{});
    case DType::i32:
      return bytes(nf_i32{});
    case DType::i64:
      return bytes(nf_i64{});
    case DType::f32:
      return bytes(nf_f32{});
    case DType::f64:
      return bytes(nf_f64{});
    default:
      throw InternalError("accumulator_bytes: " + std::string(name(ctype)) +
                          " is not a compute type");
  }
}

}  // namespace nf::jit
