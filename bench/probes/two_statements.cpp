// Probe over numfuse itself: x - mean(x, axes) as one statement, and as two
// (m = mean(x, axes); x - m), each timed by CUDA events (bench::time_us),
// with its share of a device-to-device copy of the row's least bytes. Reads
// "dtype dims axes bytes" lines, the sweep's reduce-back rows:
//
//   build/release/bench/sweep_bench --list --patterns reduce-back --sizes 64M \
//       --ranks 2,3,4 --dtypes f16,f32 | python3 -c 'import json, sys
//   for l in sys.stdin:
//       r = json.loads(l)
//       dims, axes = (",".join(map(str, v)) for v in (r["inputs"][0], r["axes"]))
//       print(r["dtype"], dims, axes, r["bytes"])' \
//       > /tmp/cases.txt
//   g++ -O2 -std=c++20 -I include -I src -I bench -I build/release/include \
//       -I /usr/local/cuda/include bench/probes/two_statements.cpp -o /tmp/two_statements \
//       -L build/release -lnumfuse -Wl,-rpath,$PWD/build/release
//   /tmp/two_statements < /tmp/cases.txt
//
// Figures: bench/RESULTS.md, "A reduction broadcast back cut in two".
#include <cstdio>
#include <iostream>

#include "sweep_rows.hpp"

int main() {
  nf::seed(3);
  std::string dtype, dims, axes_text;
  long bytes = 0;
  while (std::cin >> dtype >> dims >> axes_text >> bytes) {
    const nf::DType t = probe::dtype_named(dtype);
    nf::Shape shape;
    for (long d : probe::numbers(dims)) shape.push_back(d);
    std::vector<int> axes;
    for (long a : probe::numbers(axes_text)) axes.push_back(int(a));
    const double copy = probe::copy_us(bytes);
    const nf::Array x = nf::randn(shape, t);
    nf::Array y, m;
    const double one = bench::time_us([&] { y = x - nf::mean(x, nf::Axes(axes)); });
    const nf::Array fused = y;
    const double two = bench::time_us([&] {
      m = nf::mean(x, nf::Axes(axes));
      y = x - m;
    });
    const double diff =
        nf::Array(nf::max(nf::abs(y.astype(nf::f32) - fused.astype(nf::f32)))).item<float>();
    std::printf(
        "%-5s %-22s axes %-6s one %8.2f us (%5.1f%%)  two %8.2f us (%5.1f%%)  %s  diff %.3g\n",
        dtype.c_str(), nf::to_string(shape).c_str(), axes_text.c_str(), one, 100 * copy / one, two,
        100 * copy / two, two < 0.95 * one ? "TWO" : "", diff);
    std::fflush(stdout);
  }
}
