#include "api/execute.hpp"

#include <string>

#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cpu/interpreter.hpp"
#include "numfuse/errors.hpp"
#include "plan/program.hpp"

namespace nf {

void execute(const std::vector<NodePtr>& roots, const std::vector<Array>& outputs) {
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (roots[i]->shape != outputs[i].shape() || roots[i]->dtype != outputs[i].dtype()) {
      throw InternalError("execute: root " + std::to_string(i) + " does not match its output");
    }
  }
  cpu::run(make_program(roots), outputs);
}

Array new_array(DType dtype, const Shape& shape) {
  for (auto d : shape) {
    if (d < 0) throw ShapeError("negative dimension in shape " + to_string(shape));
  }
  auto storage = allocate_host(static_cast<std::size_t>(numel(shape)) * itemsize(dtype));
  return Array(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

}  // namespace nf
