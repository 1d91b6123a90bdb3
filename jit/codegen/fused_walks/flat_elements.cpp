// Flat elements: one element a thread each loop trip, at its index in every
// array, for steps whose arrays are contiguous over the domain (or one
// value) but not aligned for vectors, or fewer elements than a vector.
#include <string>

#include "codegen/fused_walk.hpp"

namespace nf::jit {
namespace {

class FlatElements final : public FusedWalk {
 public:
  // Every step the walks before it leave: no coordinates, vector_width 1.
  bool applies(FusedSpec&) const override { return true; }

  std::string comment(const FusedSpec&) const override {
    return "Flat elements: every array is contiguous (or one value), but not all\n"
           "start on a vector boundary, or there are fewer elements than a vector;\n"
           "one element a thread.";
  }
};

}  // namespace

const FusedWalk& flat_elements_walk() {
  static const FlatElements walk;
  return walk;
}

}  // namespace nf::jit
