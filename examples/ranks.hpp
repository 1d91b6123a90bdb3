// Data-parallel training for the examples. Started by `mpirun -np N` where
// numfuse::dist is built, each process (a rank) trains on its share of every
// minibatch and the ranks sum their gradients; run alone, the one process has
// everything and sums nothing. The ranks start from the same seed, so they
// make the same weights and draw the same minibatches, and after each step's
// sum they apply the same update: their weights stay the same.
#pragma once

#include <numfuse/numfuse.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#if NF_EXAMPLE_DIST
#include <numfuse/dist.hpp>
#endif

namespace example {

// How many processes the launcher that started this one started: Open MPI's
// mpirun says so in OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's in PMI_SIZE; 1
// where no launcher did.
inline int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  return 1;
}

class Ranks {
 public:
  // One process alone.
  Ranks() = default;

  // The ranks of the mpirun that started this process (each makes its own
  // GPU the default device), or one process alone: also under `mpirun -np 1`,
  // which then runs as a plain process would. Call it before making arrays.
  static Ranks from_launch() {
    Ranks r;
    if (launched_size() == 1) return r;
#if NF_EXAMPLE_DIST
    nf::dist::init();
    r.rank_ = nf::dist::rank();
    r.size_ = nf::dist::size();
#else
    throw nf::ValueError(
        "started by mpirun with " + std::to_string(launched_size()) +
        " processes, but this example was built without numfuse::dist (CMake found no MPI): "
        "install libopenmpi-dev and build again, or run it alone");
#endif
    return r;
  }

  int rank() const {
    return rank_;
  }
  int size() const {
    return size_;
  }
  // The rank that prints and writes files.
  bool lead() const {
    return rank_ == 0;
  }

  // This rank's rows [first, last) of n: contiguous parts, as even as n
  // allows.
  std::pair<std::int64_t, std::int64_t> share(std::int64_t n) const {
    return {n * rank_ / size_, n * (rank_ + 1) / size_};
  }

  // Each of xs summed over the ranks, in one collective; alone, xs
  // evaluated.
  std::vector<nf::Array> sum(const std::vector<nf::Expr>& xs) const {
#if NF_EXAMPLE_DIST
    if (size_ > 1) return nf::dist::all_reduce(xs);
#endif
    return nf::eval(xs);
  }

  // x as the lead rank has it, on every rank: what decides the course of
  // training (stop, or halve the rate) must be the same everywhere, or the
  // ranks part ways and wait for each other forever.
  nf::Array agreed(const nf::Array& x) const {
#if NF_EXAMPLE_DIST
    if (size_ > 1) return nf::dist::broadcast(x, 0);
#endif
    return x;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Gradients summed over the ranks in buckets, as PyTorch's
// DistributedDataParallel sums them: a bucket is sent as soon as it holds
// `bytes`, in the order backprop finds the gradients (the last layer first),
// so that a large net pays a few collectives a step, not one a gradient.
// Each bucket's sum runs beside the products of the layers below
// (nf::dist::all_reduce_async), and each gradient's statement is evaluated
// straight into its bucket.
class Buckets {
 public:
  Buckets(Ranks ranks, std::int64_t bytes) : ranks_(ranks), bytes_(bytes) {}

  // *to receives x summed over the ranks, by the time flush() returns. Alone,
  // x is evaluated into *to at once.
  void add(const nf::Expr& x, nf::Array* to) {
    if (ranks_.size() == 1) {
      *to = x;
      return;
    }
    filling_.push_back(x);
    targets_.push_back(to);
    held_ += x.size() * std::int64_t(nf::itemsize(x.dtype()));
    if (held_ >= bytes_) send();
  }

  // Every gradient added, summed and in its place.
  void flush() {
    send();
#if NF_EXAMPLE_DIST
    for (auto& [sum, targets] : sent_) {
      const std::vector<nf::Array> summed = sum.wait();
      for (std::size_t k = 0; k < summed.size(); ++k) *targets[k] = summed[k];
    }
    sent_.clear();
#endif
  }

 private:
  void send() {
    if (filling_.empty()) return;
#if NF_EXAMPLE_DIST
    sent_.emplace_back(nf::dist::all_reduce_async(filling_), std::move(targets_));
#endif
    filling_.clear();
    targets_.clear();
    held_ = 0;
  }

  Ranks ranks_;
  std::int64_t bytes_;
  std::vector<nf::Expr> filling_;
  std::vector<nf::Array*> targets_;
  std::int64_t held_ = 0;
#if NF_EXAMPLE_DIST
  std::vector<std::pair<nf::dist::Pending, std::vector<nf::Array*>>> sent_;
#endif
};

}  // namespace example
