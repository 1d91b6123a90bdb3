// Strided elements: one element a thread each loop trip, whose coordinates
// the thread computes from its index, for steps that reach an array through
// strides over the domain's coordinates (a view, a broadcast) or compute
// iota, whose values are coordinates.
#include <string>

#include "codegen/fused_walk.hpp"

namespace nf::jit {
namespace {

class StridedElements final : public FusedWalk {
 public:
  // A domain of one dim or more, one of whose arrays is strided or whose
  // step computes iota; one element a thread, no vectors.
  bool applies(FusedSpec& spec) const override {
    if (spec.step->domain.size() == 0 || (!any_strided(spec) && !computes_iota(spec))) return false;
    spec.vector_width = 1;
    spec.unroll = 1;
    return true;
  }

  bool coordinates() const override { return true; }

  std::string comment(const FusedSpec&) const override {
    return "Strided elements: an array is written through strides, or the step\n"
           "computes iota (whose values are coordinates); one element a thread,\n"
           "its coordinates found by division.";
  }

 private:
  static bool any_strided(const FusedSpec& spec) {
    for (const auto& o : spec.reads)
      if (o.access == Access::strided) return true;
    for (const auto& o : spec.writes)
      if (o.access == Access::strided) return true;
    return false;
  }
};

}  // namespace

const FusedWalk& strided_elements_walk() {
  static const StridedElements walk;
  return walk;
}

}  // namespace nf::jit
