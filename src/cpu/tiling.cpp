#include "cpu/tiling.hpp"

#include <algorithm>

namespace nf::cpu {

Shape Box::shape() const {
  Shape s(lo.size());
  for (std::size_t d = 0; d < lo.size(); ++d) s[d] = hi[d] - lo[d];
  return s;
}

Box project(const Box& b, const Shape& s) {
  const std::size_t lead = b.lo.size() - s.size();
  Box p{std::vector<std::int64_t>(s.size(), 0), std::vector<std::int64_t>(s.size(), 1)};
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (s[j] == 1) continue;
    p.lo[j] = b.lo[lead + j];
    p.hi[j] = b.hi[lead + j];
  }
  return p;
}

Tiling::Tiling(const Shape& shape, std::int64_t target) : shape_(shape) {
  if (numel(shape) == 0) return;
  count_ = 1;
  std::int64_t inner = 1;
  int k = int(shape.size()) - 1;
  while (k >= 0 && inner * shape[k] <= target) inner *= shape[k--];
  if (k < 0) return;
  axis_ = k;
  // Equal chunks, so that the last is not a sliver.
  const std::int64_t want = std::max<std::int64_t>(1, target / inner);
  chunks_ = (shape[k] + want - 1) / want;
  chunk_ = (shape[k] + chunks_ - 1) / chunks_;
  chunks_ = (shape[k] + chunk_ - 1) / chunk_;
  for (int d = 0; d < k; ++d) count_ *= shape[d];
  count_ *= chunks_;
}

Box Tiling::box(std::int64_t i) const {
  Box b{std::vector<std::int64_t>(shape_.size(), 0), std::vector<std::int64_t>(shape_)};
  if (axis_ < 0) return b;
  const std::int64_t c = i % chunks_;
  b.lo[axis_] = c * chunk_;
  b.hi[axis_] = std::min(shape_[axis_], b.lo[axis_] + chunk_);
  std::int64_t outer = i / chunks_;
  for (int d = axis_ - 1; d >= 0; --d) {
    b.lo[d] = outer % shape_[d];
    b.hi[d] = b.lo[d] + 1;
    outer /= shape_[d];
  }
  return b;
}

}  // namespace nf::cpu
