// numfuse::dist built where CMake found MPI but not NCCL: the CPU backend's
// collectives work; a GPU's say what is missing.
#include <string>

#include "dist/transport.hpp"
#include "numfuse/errors.hpp"

namespace nf::dist {

Transport& device_transport(int device) {
  throw CudaError("nf::dist: collectives on cuda:" + std::to_string(device) +
                  " need NCCL, which this numfuse::dist was built without: build with NCCL "
                  "found (NF_NCCL_ROOT), or keep the arrays on the CPU backend (NF_DEVICE=cpu)");
}

void close_device_transports() {}

}  // namespace nf::dist
