// A generated kernel's arguments, laid out as cuLaunchKernel reads them: each
// parameter's value in its own 8-byte-aligned slot. The CUDA executor and the
// kernel emulator both bind through here, so a kernel gets the same values,
// constants rounded the same way, on a device and in a test.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "graph/node.hpp"
#include "plan/schedule.hpp"

namespace nf::jit {

class StepKernels;

struct ArgumentLayout {
  // Every slot, the values no run changes (element counts, dims, strides,
  // extents) written in; a run copies them and binds the rest.
  std::vector<std::uint64_t> words;
  std::vector<std::uint32_t> slots;  // per parameter: its first word
  // Parameters whose values each run binds: pointers, constants, seeds,
  // streams and workspaces, one word each.
  struct Bind {
    KernelParam::Kind kind;
    int index;
    std::uint32_t slot;
  };
  std::vector<Bind> binds;
};

// The layout of kernel `i` of `step`.
ArgumentLayout lay_out_arguments(const StepKernels& step, std::size_t i);

// Where a run's values lie: element 0 of each value a step reads, and where
// it writes each (a root's output, wherever else the root lives).
class ValueAddresses {
 public:
  virtual void* read(int node) const = 0;
  virtual void* write(int node) const = 0;

 protected:
  ~ValueAddresses() = default;
};

// Writes one run's values into `words`, a copy of layout.words.
void bind_arguments(const ArgumentLayout& layout, std::uint64_t* words, const Program& p,
                    const Step& step, const ValueAddresses& at, std::span<void* const> workspaces);

}  // namespace nf::jit
