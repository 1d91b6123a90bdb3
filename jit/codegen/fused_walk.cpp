// What an elementwise walk does unless it says otherwise, and the order the
// walks are asked in.
#include "codegen/fused_walk.hpp"

#include "codegen/fused_kernel.hpp"

namespace nf::jit {

bool FusedWalk::coordinates() const {
  return false;
}

// One element a thread each loop trip.
void FusedWalk::loop(const FusedKernel& k, SourceWriter& w) const {
  k.element_loop(w, "first");
}

// The order is the preference: coordinates wherever an array is a view or
// the step computes iota (whose values are coordinates), as no flat walk
// computes them; vectors where every flat array allows them; single
// elements for the rest.
const std::vector<const FusedWalk*>& fused_walks() {
  static const std::vector<const FusedWalk*> walks = {
      &strided_elements_walk(),
      &flat_vectors_walk(),
      &flat_elements_walk(),
  };
  return walks;
}

}  // namespace nf::jit
