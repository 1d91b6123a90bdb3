// Typed errors. Errors a user causes (bad shapes, dtypes, values) are distinct
// from InternalError, which means numfuse itself is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace nf {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shapes that do not broadcast, bad axes, bad slices, bad reshapes, negative
// dimensions, element counts past int64.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// An op applied to a dtype it does not accept, or an unsafe in-place cast.
class DTypeError : public Error {
 public:
  using Error::Error;
};

// A value outside what an op accepts (an index out of range, a scalar that does
// not fit the array's dtype, an integer to a negative scalar power, a
// reduction of an empty array without identity), or a write into a read-only
// view (Array::writeable()).
class ValueError : public Error {
 public:
  using Error::Error;
};

// An array larger than any device addresses (2^63-1 bytes) or than its
// device holds; the message names the bytes asked and, on a GPU, those free.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// NVRTC rejected generated source; carries both so a bug report is complete.
class CompileError : public Error {
 public:
  CompileError(const std::string& what, std::string source, std::string log)
      : Error(what), source_(std::move(source)), log_(std::move(log)) {}
  const std::string& source() const { return source_; }
  const std::string& log() const { return log_; }

 private:
  std::string source_;
  std::string log_;
};

// A file that cannot be opened, read or written, or whose contents are not
// what its format says (nf::load of a truncated or foreign .npy file).
class IOError : public Error {
 public:
  using Error::Error;
};

class CudaError : public Error {
 public:
  using Error::Error;
};

class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace nf
