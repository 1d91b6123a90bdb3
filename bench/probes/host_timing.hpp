// Wall-clock timing of a call on the host, for the probes that time the CPU
// backend (which has no CUDA events).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace probe {

// Microseconds of one call of f: the median of `runs` calls after `warmups`.
inline double median_wall_us(const std::function<void()>& f, int runs, int warmups) {
  for (int i = 0; i < warmups; ++i) f();
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + runs / 2, us.end());
  return us[std::size_t(runs / 2)];
}

}  // namespace probe
