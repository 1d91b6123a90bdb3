// What the probes over numfuse itself (two_statements.cpp, inner_first.cpp)
// share: reading the sweep's rows as "dtype dims axes bytes ..." lines, and
// the copy each row's time is set against.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "bench_util.hpp"
#include "cuda/memory.hpp"

namespace probe {

// "3,7,2" as {3, 7, 2}.
inline std::vector<long> numbers(const std::string& s) {
  std::vector<long> v;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');) v.push_back(std::stol(t));
  return v;
}

// The sweep's name of a floating dtype (f16, bf16, f32, f64).
inline nf::DType dtype_named(const std::string& name) {
  return name == "f16" ? nf::f16 : name == "bf16" ? nf::bf16 : name == "f64" ? nf::f64 : nf::f32;
}

// CUDA-event microseconds of a device-to-device copy moving `bytes` (half
// read, half written), measured once for each size.
inline double copy_us(long bytes) {
  static std::map<long, double> measured;
  if (!measured.count(bytes)) {
    const std::size_t half = std::size_t(bytes / 2);
    auto a = nf::cuda::allocate_device(0, half), b = nf::cuda::allocate_device(0, half);
    measured[bytes] =
        bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, half, 0); });
  }
  return measured[bytes];
}

}  // namespace probe
