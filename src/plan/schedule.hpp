// The plan of a statement: which values live in memory and the steps that
// compute them. Both backends run the same plan, so they materialise the
// same intermediates (and round them to the same dtypes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/program.hpp"

namespace nf {

enum class StepKind : std::uint8_t {
  fused,      // elementwise nodes over one domain, one kernel, one or more outputs
  reduction,  // reductions over the same axes of one domain with their elementwise
              // producers and the consumers that broadcast them back: one kernel
  gemm,       // one matmul node reading both operands from memory, and its epilogue
  gather,     // one take node reading its array and its indices from memory
};

// What cuBLASLt applies to a product before writing it: a bias along the last
// axis, then an activation.
enum class Activation : std::uint8_t { none, relu, gelu_tanh };

struct Step {
  StepKind kind;
  // The iteration space: the outputs' shape; for a reduction step the shape
  // its reductions read, whose `axes` they reduce.
  Shape domain;
  std::vector<int> nodes;   // program nodes the step computes, inputs first
  std::vector<int> reads;   // nodes it reads from memory, in program order
  std::vector<int> writes;  // nodes it writes to memory
  std::vector<int> axes;    // reduction steps: the reduced axes of `domain`
  // gemm steps: nodes are the product, then its epilogue's; reads are A, B
  // and, with a bias, the bias vector. gather steps: the take node; reads
  // are its array, then its indices.
  bool bias = false;
  Activation activation = Activation::none;
  // Reduction steps whose reductions are apart (ScheduleOptions::apart): a
  // later step reads the same elements again, so a walk that may take them
  // in either order takes them last-first, leaving the first in L2.
  bool read_again = false;
};

struct ScheduleOptions {
  bool fuse = true;       // false: every op its own kernel (NF_FUSION=off)
  int max_nodes = 256;    // a fused kernel's op count before it is split
  int max_operands = 48;  // arrays one kernel reads and writes
  // Reduction nodes written to memory and read back by the kernels that
  // broadcast them, rather than computed in the same kernel: where a
  // backend's walk of the reduction with its broadcast back runs slower than
  // a reduction and an elementwise kernel (jit::kernel_schedule).
  std::vector<int> apart;
};

// Refers to the nodes of the program it was made for by index, so it serves
// every program of the same structure (plans are memoised).
struct Schedule {
  std::vector<Step> steps;
  // Per node: where its value lives. A leaf's is its array; an alias is a view
  // (reshape, permute, broadcast) of another node's memory; a materialised
  // node is written by a step.
  enum class Home : std::uint8_t { none, leaf, alias, step };
  std::vector<Home> home;
  std::vector<int> root_of;  // per node: which root it is (-1 if none)
};

// The options of this process: NF_FUSION=off turns fusion off.
ScheduleOptions default_schedule_options();
Schedule make_schedule(const Program& p, const ScheduleOptions& options);

}  // namespace nf
