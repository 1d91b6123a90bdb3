// The in-memory layer of the kernel cache: structural signature -> kernel
// loaded on a device. A hit costs one hash-map lookup under a shared lock; on
// a miss exactly one thread generates, compiles (or loads from disk) and
// loads the kernel while others asking for the same signature wait for it.
#pragma once

#include <functional>
#include <string>

#include "cuda/kernels.hpp"

namespace nf::cuda {

// `make_source` runs only on a miss. Throws what compilation or loading
// throws, to every waiter, and remembers nothing on failure.
const LoadedKernel& find_or_load(int device, const std::string& signature, const std::string& name,
                                 const std::function<std::string()>& make_source);

}  // namespace nf::cuda
