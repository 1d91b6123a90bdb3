// Before a collective moves anything, its ranks agree on it: each says what
// it is about to do, in a few integers every rank receives. Ranks that
// disagree would otherwise exchange the wrong bytes or wait for each other
// forever; this way every rank throws the same error, naming what each passed.
#pragma once

#include <cstdint>
#include <string>

#include "numfuse/device.hpp"
#include "numfuse/dist.hpp"
#include "numfuse/dtype.hpp"
#include "numfuse/shape.hpp"

namespace nf::dist {

enum class Collective { all_reduce, broadcast, all_gather, reduce_scatter, barrier };

struct Call {
  Collective collective = Collective::barrier;
  Op op = Op::sum;  // all_reduce, reduce_scatter
  int root = 0;     // broadcast
  DType dtype = f32;
  Device::Kind device = Device::Kind::cpu;
  Shape shape;
  // A list of arrays moved as one (all_reduce of a vector): how many, their
  // elements in `shape`, {total}, and a hash of their shapes in `layout`.
  int arrays = 1;
  std::uint64_t layout = 0;
  // False where this rank found a fault of its own (an `out` it cannot
  // write): it throws that after agree(), and every other rank learns of it.
  bool ready = true;
};

// "all_reduce(sum) of (3, 4) f32 on cuda"
std::string describe(const Call& call);

// Exchanges every rank's call. Throws on every rank where they differ:
// ValueError for the collective, its op, root or device kind, DTypeError for
// the dtypes, ShapeError for the shapes, each naming every rank's call; and
// ValueError where another rank is not ready. Returns where this rank is not
// ready, for it to throw its own error. Waits NF_DIST_TIMEOUT seconds at
// most for the others, then ends the job.
void agree(const Call& call);

}  // namespace nf::dist
