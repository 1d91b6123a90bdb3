// Statements recorded once and replayed: a loop that runs the same statements
// over the same arrays (a training step) pays for their planning and launches
// once. On a GPU a replay is one CUDA graph launch, so small statements cost
// what their kernels run rather than what the host takes to launch them.
//
//   nf::Recording step = nf::record([&] {
//     m() = b1 * m + (1 - b1) * g;
//     v() = b2 * v + (1 - b2) * g * g;
//     p -= lr * m / (sqrt(v) + eps);
//   });
//   for (int i = 0; i < 1000; ++i) step.replay();
//
// Arrays a replay carries forward are updated in place (`p -= ...`,
// `m() = ...`): `m = expr` makes m a new array, once, at the recording.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "numfuse/device.hpp"

namespace nf {

class Recording {
 public:
  // Runs the recorded statements, in order, over the arrays they named,
  // reading those arrays' values as they are now.
  void replay() const;
  // How many statements were recorded.
  std::size_t statements() const;
  // The device the statements run on.
  Device device() const;

  struct State;

 private:
  explicit Recording(std::shared_ptr<const State> state);
  friend Recording record(const std::function<void()>& body);

  std::shared_ptr<const State> state_;
};

// Records the statements `body` runs on the default device, without running
// them: nothing is written until replay(). C++ numbers in the statements are
// recorded as the values they had; arrays the body makes exist from then on
// and hold values once a replay has written them. The recording keeps every
// array it names alive.
//
// Throws ValueError, recording nothing, where the body reads values to the
// host (item(), to_vector(), to()), makes an array from host values, draws
// random numbers (each replay would draw the same ones), makes `a = expr` a
// new array where expr reads a (write `a() = expr`), runs a statement on
// another device, or records or replays within a recording. On a GPU, one
// thread at a time records a device, and a statement that another thread
// runs there meanwhile throws ValueError. Whatever the body throws is thrown
// on, and nothing is recorded.
Recording record(const std::function<void()>& body);

}  // namespace nf
