// How a reduction kernel's threads map to its outputs. Along rows, the `tr`
// threads of a row share its elements, a block takes `to` rows, and rows
// that lie contiguous are read in vectors. Along columns, for reductions
// over other than the innermost dims, a warp's threads take consecutive
// outputs, so that its reads stay coalesced, and `tr` threads share each.
//
// Lanes are not walks: held, streamed and split walks each take rows or
// columns, and the lanes change only where a thread finds its output and
// how the threads of an output meet, so a walk for each pairing would write
// every walk twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/reduce_spec.hpp"

namespace nf::jit {

constexpr int kMaxRowThreads = 1024;  // threads of a block of one row, at most
constexpr int kGroupsPerThread = 4;   // aim: a few vector loads in flight per thread

// Groups a thread of rows aims to take: kGroupsPerThread, or as many
// registers' worth for scalars_over_several.
int groups_in_flight(const ReduceSpec& spec);

class ReduceLanes {
 public:
  virtual ~ReduceLanes() = default;

  // The block a walk starts from: vec, tr and to.
  virtual void shape(ReduceSpec& spec, const std::vector<std::int64_t>& offsets) const = 0;
  // The block of a split walk.
  virtual void split_block(ReduceSpec& spec) const = 0;
  // The chunks a split walk cuts each output into, given `blocks` blocks of
  // its outputs (split_block's); below 2: no split.
  virtual std::int64_t split_chunks(const ReduceSpec& spec, std::int64_t blocks,
                                    const ReduceLimits& limits) const = 0;
  // Whether held outputs need no bounds tests: every thread's groups all
  // lie in its output.
  virtual bool whole(const ReduceSpec& spec) const = 0;

  // The declaration of `tr`, the thread's index among its output's threads.
  virtual std::string thread(const ReduceSpec& spec) const = 0;
  // The thread's output in tile `tile` of `to` outputs.
  virtual std::string output(const ReduceSpec& spec, const std::string& tile) const = 0;
  // Slots of shared memory a block's partial results take.
  virtual int block_slots(const ReduceSpec& spec) const = 0;
  // The function that combines a value over the threads of an output.
  virtual std::string allreduce(const ReduceSpec& spec) const = 0;
};

// Sets spec.columns and the lanes' block; `offsets`: each operand's offset,
// reads then writes, in elements.
const ReduceLanes& choose_lanes(ReduceSpec& spec, const std::vector<std::int64_t>& offsets);
const ReduceLanes& lanes_of(const ReduceSpec& spec);

}  // namespace nf::jit
