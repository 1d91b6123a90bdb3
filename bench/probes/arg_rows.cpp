// Probe over the CPU backend: argmax and argmin over the innermost axis
// (rows of numbers one after another, accumulate_arg_row in
// src/cpu/reduce.cpp) across row widths that leave every remainder after
// its blocks of 64, and across dtypes; about 16M elements a row set. Wall
// clock per call, median of 7 after two warm-up calls. numpy's side:
// arg_rows_numpy.py prints the same rows.
//
//   g++ -O2 -std=c++20 -I include bench/probes/arg_rows.cpp -o /tmp/arg_rows \
//       -L build/release -lnumfuse -Wl,-rpath,$PWD/build/release
//   NF_DEVICE=cpu /tmp/arg_rows
//   /usr/bin/python3 bench/probes/arg_rows_numpy.py
#include <cstdio>
#include <string>

#include <numfuse/numfuse.hpp>

#include "host_timing.hpp"

int main() {
  nf::set_default_device(nf::Device::cpu());
  nf::seed(5);
  constexpr std::int64_t kElements = 1 << 24;
  for (nf::DType t : {nf::f32, nf::f64, nf::i32, nf::i64}) {
    for (std::int64_t width : {5, 33, 100, 1021, 4099, 65537}) {
      const std::int64_t rows = kElements / width;
      const nf::Array x = nf::astype(nf::randn({rows, width}) * 1000, t);
      for (bool max : {true, false}) {
        nf::Array y;
        const double us =
            probe::median_wall_us([&] { y = max ? nf::argmax(x, 1) : nf::argmin(x, 1); }, 7, 2);
        std::printf("%s %s (%lld, %lld) %.1f\n", max ? "argmax" : "argmin",
                    std::string(nf::name(t)).c_str(), (long long)rows, (long long)width, us);
        std::fflush(stdout);
      }
    }
  }
}
