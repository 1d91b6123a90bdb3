#include "plan/gather_map.hpp"

namespace nf {

GatherMap gather_map(const Node& t, const Strides& array_strides, const Strides& index_strides) {
  const Shape& a = t.inputs[0]->shape;
  const Shape& idx = t.inputs[1]->shape;
  const std::size_t axis = std::size_t(t.axis), k = idx.size();
  GatherMap m;
  m.array.assign(t.shape.size(), 0);
  m.indices.assign(t.shape.size(), 0);
  for (std::size_t d = 0; d < axis; ++d) m.array[d] = array_strides[d];
  for (std::size_t d = axis + 1; d < a.size(); ++d) m.array[d - 1 + k] = array_strides[d];
  // A dim of length 1 has coordinate 0 alone; its stride may be anything.
  for (std::size_t d = 0; d < k; ++d) m.indices[axis + d] = idx[d] == 1 ? 0 : index_strides[d];
  m.axis_stride = array_strides[axis];
  m.extent = a[axis];
  return m;
}

}  // namespace nf
