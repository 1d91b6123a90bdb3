// Memory for the values a block computes and drops: each thread keeps the
// buffers its blocks free and hands them to its next blocks, rather than
// going back to malloc for each one.
#pragma once

#include <cstddef>
#include <memory>

#include "core/storage.hpp"

namespace nf::cpu {

// Host memory of at least `bytes` (rounded up to a power of two), 64-byte
// aligned, from the calling thread's free buffers where one of that size is
// there; when freed, it goes to the freeing thread's. Requests larger than a
// block's values take are plain host allocations.
std::shared_ptr<Storage> scratch_storage(std::size_t bytes);

}  // namespace nf::cpu
