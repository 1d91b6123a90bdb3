// Runs generated kernels without a GPU, to test what they compute: the
// kernel's source (prelude included, as NVRTC gets it) is compiled as host
// C++ against a small shim of the CUDA built-ins it uses, and every thread of
// a block runs as an OS thread, so barriers and warp exchanges behave as on
// a device. Blocks run one after another, or the blocks of a cluster
// together.
#pragma once

#include <barrier>
#include <cstddef>
#include <string>
#include <vector>

namespace nf::test {

class EmulatedKernel {
 public:
  // Compiles kernel `name` of `source` with the host C++ compiler, for
  // clusters of `cluster` blocks.
  EmulatedKernel(const std::string& source, const std::string& name, int cluster = 1);
  ~EmulatedKernel();
  EmulatedKernel(const EmulatedKernel&) = delete;
  EmulatedKernel& operator=(const EmulatedKernel&) = delete;

  // args: one pointer per kernel parameter to its value, as cudaLaunchKernel
  // takes them; shared_bytes: the block's dynamic shared memory.
  void launch(unsigned blocks, unsigned threads, void** args, std::size_t shared_bytes = 0) const;

 private:
  using Entry = void (*)(unsigned blocks, unsigned threads, void** args, unsigned cluster,
                         unsigned rank, std::barrier<>* together, char* const* anchors,
                         std::size_t shared_bytes);
  struct Copy {
    void* library;
    Entry entry;
    char* anchor;
  };
  std::vector<Copy> copies_;
};

}  // namespace nf::test
