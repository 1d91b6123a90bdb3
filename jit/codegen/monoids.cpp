#include "codegen/monoids.hpp"

#include <string>

#include "core/compute_ctype.hpp"

namespace nf::jit {

std::string monoid_name(TermKind k) {
  return "nf_" + std::string(term_name(k)) + "_term";
}

std::size_t accumulator_bytes(TermKind k, DType t) {
  return visit_ctype(t, [&](auto tag) {
    using T = decltype(tag);
    return with_monoid(k, [](auto m) { return sizeof(typename decltype(m)::template acc<T>); });
  });
}

}  // namespace nf::jit
