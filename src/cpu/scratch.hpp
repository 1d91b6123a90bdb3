// Memory for the values a block computes and drops: each thread keeps the
// buffers its blocks free and hands them to its next blocks, rather than
// going back to malloc for each one.
#pragma once

#include <cstddef>
#include <memory>

#include "core/storage.hpp"

namespace nf::cpu {

// Host memory of at least `bytes`, 64-byte aligned, from the calling thread's
// free buffers where one is large enough; it returns there when freed.
// Larger requests than a block's values take are plain host allocations.
std::shared_ptr<Storage> scratch_storage(std::size_t bytes);

}  // namespace nf::cpu
