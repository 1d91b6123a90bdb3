#include "compile/file_writes.hpp"

#include <unistd.h>

#include <cerrno>

namespace nf::jit {

int write_all_and_close(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  int error = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

}  // namespace nf::jit
