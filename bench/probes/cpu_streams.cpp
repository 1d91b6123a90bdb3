// Probe over the CPU backend: elementwise statements that stream memory
// (4096 x 4099 elements, 64 MiB of f32), each evaluated into an existing
// array: conversions (astype from u8 and i32), a scalar operand (x * s, x + 0),
// an f64 and an f16 chain with exp, an integer sum; and two reductions beside
// them. Wall clock per call in ms, median of 15 after two warm-up calls, one
// line per statement. Run it with OMP_NUM_THREADS=1 too: a thread alone shows
// what each block costs. To compare two builds of the library, run this
// binary against each in turns through LD_LIBRARY_PATH (it is linked without
// an rpath for that); numpy's `np.multiply(x, s, out=y)` is the bar for the
// streams.
//
//   g++ -O2 -std=c++20 -I include bench/probes/cpu_streams.cpp -o /tmp/cpu_streams \
//       -L build/release -lnumfuse
//   LD_LIBRARY_PATH=build/release NF_DEVICE=cpu /tmp/cpu_streams
#include <cstdio>
#include <functional>

#include <numfuse/numfuse.hpp>

#include "host_timing.hpp"

namespace {

void row(const char* name, const std::function<void()>& f) {
  std::printf("%-22s %8.2f\n", name, probe::median_wall_us(f, 15, 2) / 1000);
  std::fflush(stdout);
}

}  // namespace

int main() {
  const nf::Shape m2{4096, 4099}, m3{64, 257, 1021};
  const nf::Array x = nf::randn(m2), xd = nf::randn(m2, nf::f64), xh = nf::randn(m2, nf::f16);
  const nf::Array xb = nf::astype(nf::rand(m2) * 255.f, nf::u8);
  const nf::Array xi = nf::astype(nf::rand(m2) * 1000.f, nf::i32), x3 = nf::randn(m3);
  nf::Array y = x + 0.f, yd = xd + 0.0, yh = xh + xh, yb = xb + xb;
  nf::Array m = nf::max(x3, 1), s = nf::sum(x3, {0, 2});
  row("astype u8 f32", [&] { y = nf::astype(xb, nf::f32); });
  row("astype u8 f32 * s", [&] { y = nf::astype(xb, nf::f32) * (1.f / 255); });
  row("astype i32 f32", [&] { y = nf::astype(xi, nf::f32); });
  row("x * s f32", [&] { y = x * (1.f / 255); });
  row("x + 0 f32", [&] { y = x + 0.f; });
  row("u8 + u8", [&] { yb = xb + xb; });
  row("exp chain f64", [&] { yd = nf::exp(-xd * xd) * 0.5 + xd; });
  row("exp chain f16", [&] { yh = nf::exp(-xh * xh) * 0.5 + xh; });
  row("max axis 1", [&] { m = nf::max(x3, 1); });
  row("sum axes (0, 2)", [&] { s = nf::sum(x3, {0, 2}); });
}
