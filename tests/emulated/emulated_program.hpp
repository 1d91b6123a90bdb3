// Runs a whole statement's generated kernels in the kernel emulator, as the
// CUDA backend would run them on a device: every step of its schedule in
// order, values placed as the executor places them (leaves in their arrays,
// roots in their outputs, other step values in temporaries), arguments bound
// as it binds them, and the detour through new buffers that run_on_cuda
// takes where an output overlaps an input read at other elements. All arrays
// are host arrays. Products (gemm steps) are not emulated.
#pragma once

#include <span>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "codegen/reduce_spec.hpp"
#include "graph/node.hpp"
#include "plan/schedule.hpp"

namespace nf::test {

// How one step ran, for tests that check the walk they meant.
struct EmulatedStep {
  StepKind kind;
  int kernels = 0;  // kernels launched (none for an empty domain)
  int cluster = 1;  // reduction steps: blocks of a cluster
  bool prefetch = false;
  int per = 0;             // reduction steps: groups a thread holds (0: read again each pass)
  bool shared = false;     // reduction steps: held in shared memory, not registers
  bool words = false;      // shared: 1- and 2-byte elements held in 4-byte words
  bool staged = false;     // shared: rows copied in the 16-byte units that cover them
  bool reverse = false;    // split: every other kernel takes its chunks in reverse
  int vec = 1;             // reduction steps: elements a group, one vector load
  bool shifted = false;    // rows of vectors that start anywhere in their first group
  bool covered = false;    // runs read in the aligned vectors that cover them
  bool pairs = false;      // columns: a thread on two outputs, reading their word
  bool run_lanes = false;  // a thread at one place along short runs, a run apart
};

struct EmulatedRun {
  std::vector<EmulatedStep> steps;  // of the statement's own schedule
  bool detoured = false;            // computed into new buffers, then copied
};

// Writes roots[i] into outputs[i] (host arrays of the roots' shapes and
// dtypes). Reductions are walked as `limits` say (reduce_limits_for an arch,
// or limits lowered to reach other walks on small shapes).
EmulatedRun run_emulated(std::span<const NodePtr> roots, std::span<const Array> outputs,
                         const jit::ReduceLimits& limits);

// The same for expressions: writes each into the given output, or into a new
// host array where none is given, and returns the outputs.
std::vector<Array> emulate(const std::vector<Expr>& roots, std::vector<Array> outputs = {},
                           const jit::ReduceLimits& limits = jit::ReduceLimits{},
                           EmulatedRun* run = nullptr);

// The limits of an sm_90 device (clusters, prefetching), which the emulator
// runs as such a device would.
jit::ReduceLimits sm90_reduce_limits();

}  // namespace nf::test
