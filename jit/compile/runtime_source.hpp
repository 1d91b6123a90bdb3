// The device-side runtime (jit/runtime/*.h) as one text, embedded into the
// library at build time by cmake/embed_runtime.cmake.
#pragma once

#include <string_view>

namespace nf::jit {

// nf_defs.h, nf_half.h, nf_cast.h, nf_ops.h, nf_philox.h, nf_reduce.h and nf_kernel.h in
// dependency order (NF_RUNTIME_HEADERS in CMakeLists.txt), without their
// include guards and includes of each other: generated kernel source appended
// to this compiles with NVRTC and no include path.
std::string_view runtime_prelude();

}  // namespace nf::jit
