// Wall-clock time of a statement as a program sees it, shared by the examples.
#pragma once

#include <numfuse/numfuse.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace example {

// Milliseconds per call of `statement`, which returns the array it assigned:
// one warm-up call (on a GPU it compiles the kernels, on the CPU it loads
// OpenBLAS), then the median of `runs` calls. Each call ends by reading one
// element back, which waits until the device has finished.
inline double median_ms(const std::function<nf::Array()>& statement, int runs) {
  statement().reshape({-1})(0).item<float>();
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    statement().reshape({-1})(0).item<float>();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return ms[runs / 2];
}

// The devices to run on: the GPU where nf::default_device() is one, then the CPU backend.
inline std::vector<nf::Device> devices() {
  std::vector<nf::Device> all;
  if (nf::default_device().kind == nf::Device::Kind::cuda) all.push_back(nf::default_device());
  all.push_back(nf::Device::cpu());
  return all;
}

// x on device d: itself where it lives there, else a copy.
inline nf::Array on(const nf::Array& x, nf::Device d) {
  return x.device() == d ? x : x.to(d);
}

}  // namespace example
