// A job whose rank 1 stops taking part, for tests/dist/ending.sh:
//   skip   rank 1 leaves out a collective and calls the next one;
//   stall  rank 1 calls no collective for longer than NF_DIST_TIMEOUT;
//   throw  rank 1 ends on an exception nobody catches.
// In each the other ranks must not wait forever: the job ends, saying why.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

int main(int argc, char* argv[]) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "skip" && mode != "stall" && mode != "throw") {
    std::fprintf(stderr, "usage: %s skip|stall|throw\n", argv[0]);
    return 2;
  }
  nf::dist::init();
  const nf::Array x = nf::ones({4});
  if (nf::dist::rank() != 1) {
    nf::dist::all_reduce(x);
  } else if (mode == "stall") {
    std::this_thread::sleep_for(std::chrono::seconds(30));
  } else if (mode == "throw") {
    throw std::runtime_error("rank 1's own failure");
  }
  nf::dist::barrier();
  std::printf("rank %d: every rank went on\n", nf::dist::rank());
  nf::dist::finalize();
  return 0;
}
