// Whole writes to a file descriptor, for the files the kernel cache and the
// manifest write: a short write or EINTR never leaves part of a record.
#pragma once

#include <cstddef>

namespace nf::jit {

// Writes all `size` bytes at `data` and closes `fd` (which releases any
// flock held on it); returns 0 or the errno of the first failure.
int write_all_and_close(int fd, const char* data, std::size_t size);

}  // namespace nf::jit
