// Probe over numfuse itself: a reduction over the innermost axis and others
// apart from it (sum over (0, 2) of (A, B, C); kept axes lie between the
// reduced ones) as numfuse plans it, one kernel reading each output's
// elements an element at a time, against the same reduction cut in two
// written by hand: first over the innermost run of reduced axes (rows in
// memory, which numfuse reads in vectors at copy speed), into f32 partials
// a row long fewer, then over the other axes of those. The sweep's figures
// (H200, bench/results/sweep-reduce-64M-h200-main.jsonl) ask for it: sum over
// (0, 2) of (323, 323, 323) f16 takes 34.3 us, over 2 alone 16.9.
//
// Reads "dtype dims axes bytes work" lines, the sweep's rows of this kind,
// and times each by CUDA events (bench::time_us), with its share of a
// device-to-device copy of the row's least bytes (w(x): x in f32 where it is
// a half type):
//
//   sum:      numfuse sum(x, axes)          cut: sum(sum(w(x), inner), outer)
//   x - mean: numfuse x - mean(x, axes)     cut: x - mean(mean(w(x), inner), outer)
//
// On a GPU, build it against a library from before the planner cut these
// reductions itself (2b4fe01), or its two columns are both cut.
//
//   build/release/bench/sweep_bench --list --patterns reduce,reduce-back --sizes 64M \
//       --ranks 3,4 --dtypes f16,f32 | python3 -c 'import json, sys
//   for l in sys.stdin:
//       r = json.loads(l); n = len(r["inputs"][0]); a = r["axes"]
//       if n - 1 in a and len(a) < n and any(i not in a for i in range(min(a), n)):
//           dims, axes = (",".join(map(str, v)) for v in (r["inputs"][0], a))
//           print(r["dtype"], dims, axes, r["bytes"], r["work"])' > /tmp/cases.txt
//   g++ -O2 -std=c++20 -I include -I src -I bench -I build/release/include \
//       -I /usr/local/cuda/include bench/probes/inner_first.cpp -o /tmp/inner_first \
//       -L build/release -lnumfuse -Wl,-rpath,$PWD/build/release
//   /tmp/inner_first < /tmp/cases.txt
//   /tmp/inner_first --cpu < /tmp/cases.txt    (the CPU backend, wall clock; no share of copy)
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>

#include "host_timing.hpp"
#include "sweep_rows.hpp"

namespace {

// The reduced axes that end at the last one with no kept axis between them
// (inner), and the rest (outer).
void cut(const std::vector<int>& axes, int ndim, std::vector<int>& inner, std::vector<int>& outer) {
  int from = ndim - 1;
  while (from > 0 && std::find(axes.begin(), axes.end(), from - 1) != axes.end()) --from;
  for (int a : axes) (a >= from ? inner : outer).push_back(a);
}

// Microseconds per call of f: CUDA events on a GPU; on the CPU backend the
// median of 5 calls' wall clock, each call running its statement.
double time_us(bool cpu, const std::function<void()>& f) {
  return cpu ? probe::median_wall_us(f, 5, 1) : bench::time_us(f);
}

}  // namespace

int main(int argc, char** argv) {
  const bool cpu = argc > 1 && std::string(argv[1]) == "--cpu";
  if (cpu) nf::set_default_device(nf::Device::cpu());
  nf::seed(3);
  std::string dtype, dims, axes_text, work;
  long bytes = 0;
  while (std::cin >> dtype >> dims >> axes_text >> bytes >> work) {
    const nf::DType t = probe::dtype_named(dtype);
    nf::Shape shape;
    for (long d : probe::numbers(dims)) shape.push_back(d);
    std::vector<int> axes, inner, outer;
    for (long a : probe::numbers(axes_text)) axes.push_back(int(a));
    cut(axes, int(shape.size()), inner, outer);
    if (inner.empty() || outer.empty()) continue;
    const nf::Array x = nf::randn(shape, t);
    const bool back = work == "reduce-back";
    nf::Array y;
    const double one = time_us(
        cpu, [&] { y = back ? x - nf::mean(x, nf::Axes(axes)) : nf::sum(x, nf::Axes(axes)); });
    const nf::Array numfuse = y;
    const nf::DType partial = nf::itemsize(t) < 4 ? nf::f32 : t;
    const double two = time_us(cpu, [&] {
      const nf::Expr wide = nf::astype(x, partial);
      y = back ? x - nf::astype(nf::mean(nf::mean(wide, nf::Axes(inner)), nf::Axes(outer)), t)
               : nf::astype(nf::sum(nf::sum(wide, nf::Axes(inner)), nf::Axes(outer)), t);
    });
    const double diff =
        nf::Array(nf::max(nf::abs(y.astype(nf::f64) - numfuse.astype(nf::f64)))).item<double>();
    const double copy = cpu ? 0 : probe::copy_us(bytes);
    std::printf(
        "%-11s %-5s %-22s axes %-7s numfuse %9.2f us (%5.1f%%)  cut %9.2f us (%5.1f%%)  %s  "
        "diff %.3g\n",
        work.c_str(), dtype.c_str(), nf::to_string(shape).c_str(), axes_text.c_str(), one,
        100 * copy / one, two, 100 * copy / two, two < 0.95 * one ? "CUT" : "", diff);
    std::fflush(stdout);
  }
}
