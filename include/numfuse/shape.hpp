// Shapes, strides and axis lists: runtime values, as in numpy.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nf {

using Shape = std::vector<std::int64_t>;
using Strides = std::vector<std::int64_t>;  // in elements, may be 0 or negative

std::int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "(3, 4)", "()" for 0-d

// numpy broadcasting; throws ShapeError naming both shapes and `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

// Axes to reduce or squeeze. Default-constructed means "all axes". Negative
// axes count from the end.
class Axes {
 public:
  Axes() = default;
  Axes(int axis) : all_(false), list_{axis} {}
  Axes(std::initializer_list<int> axes) : all_(false), list_(axes) {}
  Axes(std::vector<int> axes) : all_(false), list_(std::move(axes)) {}

  bool is_all() const { return all_; }
  const std::vector<int>& list() const { return list_; }

 private:
  bool all_ = true;
  std::vector<int> list_;
};

}  // namespace nf
