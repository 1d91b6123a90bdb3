// Where arrays live and statements run.
#pragma once

#include <string>

#include "numfuse/dtype.hpp"

namespace nf {

struct Device {
  enum class Kind { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  static Device cpu() { return {}; }
  bool operator==(const Device&) const = default;
};

std::string to_string(Device d);  // "cpu", "cuda:0"

// The device new arrays are created on.
Device default_device();
void set_default_device(Device d);

// On the CPU backend, compute f32 (and f16/bf16) work in this dtype: f32 by
// default (what a GPU computes), f64 for gradient checks. Stored dtypes are
// unchanged.
void set_cpu_compute_dtype(DType t);
DType cpu_compute_dtype();

}  // namespace nf
