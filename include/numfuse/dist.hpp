// Data-parallel numfuse: one process per GPU, started by mpirun, and
// collectives on arrays across the processes (ranks): over NCCL for arrays on
// a GPU, over MPI for arrays on the CPU backend.
//
//   nf::dist::init();                  // mpirun -np 2 ./train
//   nf::Array g = nf::dist::all_reduce(x.T() @ dy, nf::dist::Op::mean);
//
// A collective takes an expression: its statement runs as one fused kernel
// straight into the buffer the collective reads, and the collective runs on
// numfuse's stream after it, with no wait on the host.
//
// Every rank calls the same collectives in the same order, with arrays of the
// same shape, dtype and kind of device. numfuse checks that first (a few
// integers from each rank): where they differ, every rank throws ShapeError,
// DTypeError or ValueError naming what each rank passed, and no rank has
// changed anything. A rank that does not come to a collective within
// NF_DIST_TIMEOUT seconds ends the job with a message naming the collective,
// rather than leaving the others waiting forever; so does a rank that ends on
// an uncaught exception or a failure inside NCCL.
//
// Built as the library numfuse::dist where CMake finds MPI; its GPU
// collectives where it also finds NCCL.
#pragma once

#include <memory>
#include <vector>

#include "numfuse/array.hpp"
#include "numfuse/expr.hpp"

namespace nf::dist {

// Starts MPI, unless the program has, and, when the default device is a GPU,
// makes it the GPU of this rank's place on its machine (local_rank()), so
// that each process of `mpirun -np <GPUs>` drives its own GPU. Call it once,
// before making arrays. Throws CudaError when a machine runs more ranks than
// it has GPUs.
void init();
// Ends NCCL and, when init() started it, MPI. Runs at exit if not called.
void finalize();
bool initialized();

int rank();        // this process's place among all of them, from 0
int size();        // how many processes take part
int local_rank();  // this process's place among those on its machine

enum class Op { sum, mean, max, min };

// Every rank's x combined elementwise by `op`, on every rank. `sum` of bool
// is numpy's (logical or); `mean` needs a floating dtype.
Array all_reduce(const Expr& x, Op op = Op::sum);
// The same into `out` (numpy's out=): a contiguous, writeable array of x's
// shape, dtype and device. With x = out, out is reduced in place.
void all_reduce(const Expr& x, Op op, const Array& out);

// Each of xs combined over the ranks as above, all in one collective: the
// gradients of a model in one bucket, so that a step pays one collective's
// latency, not one a gradient. Their statements are evaluated together into
// one buffer; the results are views of it, in the order given. Every x has
// one dtype and device.
std::vector<Array> all_reduce(const std::vector<Expr>& xs, Op op = Op::sum);

// A list's all_reduce on its way: all_reduce_async queues the collective on
// a stream of its own, beside the work numfuse queues on this rank's GPU
// after it, and wait() has numfuse's work from then on wait for it (on the
// device, not the host) and gives the results, as all_reduce(xs, op) would.
// Backprop's gradients summed bucket by bucket while the layers below are
// still being worked out:
//
//   nf::dist::Pending top = nf::dist::all_reduce_async({dw2, db2});
//   nf::Array dz = nf::dot(dy, w2.T()) * (1 - h * h);  // beside the sum
//   std::vector<nf::Array> g = top.wait();
//
// The arrays xs read are free to change once this returns. On the CPU
// backend the collective has run by the time it returns. Destroying a
// Pending that was not waited for waits for it all the same.
class Pending {
 public:
  Pending();
  ~Pending();
  Pending(Pending&&) noexcept;
  Pending& operator=(Pending&&) noexcept;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  // The combined arrays, views of one buffer, in the order given; the same
  // ones again if called again.
  std::vector<Array> wait();

 private:
  friend Pending all_reduce_async(const std::vector<Expr>& xs, Op op);
  struct State;
  std::unique_ptr<State> state_;
};

Pending all_reduce_async(const std::vector<Expr>& xs, Op op = Op::sum);

// x of rank `root` on every rank. The other ranks' x give only the shape and
// dtype, which must match root's; they are not evaluated.
Array broadcast(const Expr& x, int root = 0);

// Every rank's x, in rank order, concatenated along axis 0: (size() * n, ...)
// for x of shape (n, ...); a 0-d x gives a 1-D array of size() elements.
Array all_gather(const Expr& x);

// Every rank's x combined by `op` and split along axis 0 into size() equal
// parts, of which this rank keeps part rank(): (n / size(), ...) for x of
// shape (n, ...), where size() divides n.
Array reduce_scatter(const Expr& x, Op op = Op::sum);

// Returns once every rank has called it and numfuse's work queued before it
// on this rank's device has finished.
void barrier();

}  // namespace nf::dist
