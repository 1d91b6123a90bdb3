// Timing shared by the benchmarks: device time by CUDA events after warm-up,
// the median of repeated batches; and host wall-clock time per call, also the
// median of batches.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "cuda/devices.hpp"
#include "cuda/timing.hpp"

namespace bench {

// Median device microseconds per call of f, over batches sized to ~20 ms.
inline double time_us(const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();
  nf::cuda::EventTimer t(0);
  t.start();
  f();
  const double one = std::max(t.stop(), 1e-3);
  const int iters = std::clamp(int(20.0 / one), 3, 2000);
  std::vector<double> per_call;
  for (int rep = 0; rep < 9; ++rep) {
    t.start();
    for (int i = 0; i < iters; ++i) f();
    per_call.push_back(t.stop() * 1e3 / iters);
  }
  std::nth_element(per_call.begin(), per_call.begin() + 4, per_call.end());
  return per_call[4];
}

// Microseconds per call of f: the median of 9 batches of `calls` calls, each
// batch ending with a wait for the device, timed with the batch or not.
inline double batch_median_us(const std::function<void()>& f, int calls, bool time_the_wait) {
  std::vector<double> per_call;
  for (int rep = 0; rep < 9; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    if (time_the_wait) nf::cuda::synchronize(0);
    const std::chrono::duration<double, std::micro> us = std::chrono::steady_clock::now() - t0;
    if (!time_the_wait) nf::cuda::synchronize(0);
    per_call.push_back(us.count() / calls);
  }
  std::nth_element(per_call.begin(), per_call.begin() + 4, per_call.end());
  return per_call[4];
}

// Host wall-clock microseconds per call of f, as a program issuing
// statements back to back sees it: each batch's wait for the device is
// timed. The median keeps a moment in which the host ran slowly out of the
// figure.
inline double wall_us(const std::function<void()>& f, int calls = 1000) {
  for (int i = 0; i < calls / 10 + 1; ++i) f();
  nf::cuda::synchronize(0);
  return batch_median_us(f, calls, true);
}

// Host microseconds per call of f while the device keeps up: the wait that
// ends each batch is not timed (few enough calls that the launch queue does
// not fill).
inline double issue_us(const std::function<void()>& f, int calls = 100) {
  for (int i = 0; i < calls; ++i) f();
  nf::cuda::synchronize(0);
  return batch_median_us(f, calls, false);
}

}  // namespace bench
