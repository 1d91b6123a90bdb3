#include "codegen/fused_spec.hpp"

#include <algorithm>

#include "codegen/fused_walk.hpp"

namespace nf::jit {
namespace {

Access access_of(const Layout& l, const Shape& domain) {
  if (numel(l.shape) == 1) return Access::scalar;
  if (l.shape == domain && l.contiguous()) return Access::flat;
  return Access::strided;
}

}  // namespace

Layout write_layout(const Schedule& s, int i, const std::vector<std::optional<Layout>>& layouts,
                    const std::vector<Array>& outputs) {
  if (s.root_of[i] >= 0) {
    const Array& a = outputs[s.root_of[i]];
    return {a.dtype(), a.shape(), a.strides(), a.offset()};
  }
  return *layouts[i];
}

FusedSpec make_fused_spec(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs) {
  FusedSpec spec;
  spec.program = &p;
  spec.plan = &s;
  spec.step = &step;
  constexpr std::int64_t kInt32Reach = std::int64_t(1) << 31;
  spec.index64 = numel(step.domain) >= kInt32Reach;
  std::vector<Layout> all;
  for (int r : step.reads) all.push_back(*layouts[r]);
  for (int w : step.writes) all.push_back(write_layout(s, w, layouts, outputs));
  std::size_t widest = 1;
  bool aligned = true;
  for (std::size_t j = 0; j < all.size(); ++j) {
    const Layout& l = all[j];
    const Access a = access_of(l, step.domain);
    (j < step.reads.size() ? spec.reads : spec.writes).push_back({l.dtype, a});
    spec.index64 = spec.index64 || l.beyond_int32();
    if (a == Access::flat) widest = std::max(widest, itemsize(l.dtype));
  }
  // 16-byte vectors for the widest dtype; every flat array must start on a
  // vector boundary (buffers themselves are 256-byte aligned).
  const std::int64_t width = std::int64_t(16 / widest);
  for (std::size_t j = 0; j < all.size(); ++j) {
    const Access a =
        j < step.reads.size() ? spec.reads[j].access : spec.writes[j - step.reads.size()].access;
    if (a == Access::flat && all[j].offset % width != 0) aligned = false;
  }
  spec.vector_width = aligned && numel(step.domain) >= width ? int(width) : 1;
  // The first walk that applies takes the step and sets its launch shape.
  for (const FusedWalk* walk : fused_walks()) {
    if (walk->applies(spec)) {
      spec.walk = walk;
      break;
    }
  }
  return spec;
}

}  // namespace nf::jit
