// Where new arrays are created, for one scope. Tests about one backend (the
// kernel emulator, set_cpu_compute_dtype, OpenBLAS) pin it, so that their
// outcome does not depend on the machine they run on.
#pragma once

#include <numfuse/numfuse.hpp>

namespace nf::test {

class OnDevice {
 public:
  explicit OnDevice(Device d) : saved_(default_device()) { set_default_device(d); }
  ~OnDevice() { set_default_device(saved_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  Device saved_;
};

}  // namespace nf::test
