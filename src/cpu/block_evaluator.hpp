// Evaluating a step's nodes over one block of its domain: every value is the
// block's part of the whole-array value, so blocks compose to exactly what
// evaluating the whole arrays gives.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "cpu/tiling.hpp"
#include "cpu/value.hpp"
#include "numfuse/array.hpp"
#include "plan/program.hpp"

namespace nf::cpu {

// Per program node, the array holding its value, where it is in memory
// (arrays of leaves, buffers that steps write, views of them); empty
// elsewhere.
using Memory = std::vector<std::optional<Array>>;

// The elements of box b of array a, as a view.
Array sub_array(const Array& a, const Box& b);
// A new contiguous array in host memory.
Array host_array(DType dtype, const Shape& shape);

// The nodes that computing `targets` computes, in program order: those in
// `computed` (a step's nodes) and any other not in memory (a broadcast that an
// epilogue reads), stopping at nodes read from memory.
std::vector<int> nodes_to_compute(const Program& p, const std::vector<int>& targets,
                                  const std::vector<bool>& computed, const Memory& mem);

class BlockEvaluator {
 public:
  BlockEvaluator(const Program& p, const Memory& mem, Box b)
      : p_(p), mem_(mem), box_(std::move(b)), values_(p.nodes.size()) {}

  // Computes `nodes` (program order) over the block. A reduction among them
  // must find the block covering its reduced axes whole.
  void compute(const std::vector<int>& nodes);
  // Has compute() write elementwise node i's value straight into `target`
  // (the block's part of the array a statement writes, holding i's compute
  // type) rather than into a block buffer copied there after: the copy cost
  // y = x * s as much again as the multiply. Only for the last node computed,
  // so that nothing after it reads the target's old elements.
  void write_into(int i, Value target);
  // Node i's value over the block: computed, or read from memory.
  const Value& value(int i);
  // The block as seen by node i, whose shape broadcasts to the domain.
  Box box_of(int i) const;

 private:
  Value evaluate(int i);

  const Program& p_;
  const Memory& mem_;
  Box box_;
  std::vector<Value> values_;
  int into_node_ = -1;
  Value into_;
};

}  // namespace nf::cpu
