// Probe over the CPU backend: reductions that keep the innermost axis
// (columns: run_reduction's tiles of outputs and parts of the reduced
// extent, src/cpu/reduction_step.cpp) across the class: every axis set of
// rank 3 that keeps the innermost axis, rank 2 tall, square and wide, rank 4
// middle axes, few and many reduced elements, dtypes f32, f64, f16 and i32,
// and a broadcast back (x - mean(x, 0)) and var. About 16M elements a shape
// (64 MiB of f32). Wall clock per call, median of 9 after two warm-up calls;
// prints "op dtype shape axes us" lines (shape as
// 64x257x1021, axes as (0,1)). numpy's side: column_tiles_numpy.py
// prints the same rows. To compare two builds of the library, run this
// binary against each in turns (base, change, change, base) through
// LD_LIBRARY_PATH (it is linked without an rpath for that).
//
//   g++ -O2 -std=c++20 -I include bench/probes/column_tiles.cpp -o /tmp/column_tiles \
//       -L build/release -lnumfuse
//   LD_LIBRARY_PATH=build/release NF_DEVICE=cpu /tmp/column_tiles [FILTER]
//   /usr/bin/python3 bench/probes/column_tiles_numpy.py [FILTER]
// FILTER: only the rows whose line contains it.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "host_timing.hpp"

namespace {

struct Row {
  const char* op;  // sum, center (x - mean(x, axes)), var
  nf::DType dtype;
  nf::Shape shape;
  std::vector<int> axes;
};

std::string label(const Row& r) {
  std::string axes = "(";
  for (std::size_t i = 0; i < r.axes.size(); ++i) {
    axes += (i ? "," : "") + std::to_string(r.axes[i]);
  }
  std::string shape;
  for (std::size_t i = 0; i < r.shape.size(); ++i) {
    shape += (i ? "x" : "") + std::to_string(r.shape[i]);
  }
  return std::string(r.op) + " " + std::string(nf::name(r.dtype)) + " " + shape + " " + axes + ")";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  nf::set_default_device(nf::Device::cpu());
  nf::seed(7);
  const nf::Shape r3{64, 257, 1021}, tall{65521, 257}, square{4096, 4099}, wide{257, 65521};
  const nf::Shape few{3, 5000011}, narrow{524287, 31}, r4{43, 61, 37, 127};
  std::vector<Row> rows;
  for (nf::DType t : {nf::f32, nf::f64, nf::f16, nf::i32}) {
    rows.push_back({"sum", t, r3, {0}});
    rows.push_back({"sum", t, r3, {1}});
    rows.push_back({"sum", t, r3, {0, 1}});
    rows.push_back({"sum", t, square, {0}});
  }
  for (const nf::Shape& s : {tall, wide, few, narrow}) rows.push_back({"sum", nf::f32, s, {0}});
  rows.push_back({"sum", nf::f32, r4, {1, 2}});
  rows.push_back({"sum", nf::f32, r4, {1}});
  rows.push_back({"sum", nf::f32, r4, {2}});
  rows.push_back({"sum", nf::f64, r4, {1, 2}});
  rows.push_back({"center", nf::f32, r3, {0}});
  rows.push_back({"center", nf::f32, square, {0}});
  rows.push_back({"center", nf::f32, r3, {0, 1}});
  rows.push_back({"var", nf::f32, r3, {0}});
  rows.push_back({"var", nf::f32, square, {0}});
  rows.push_back({"var", nf::f32, r3, {0, 1}});
  rows.push_back({"var", nf::f64, r3, {1}});
  for (const Row& r : rows) {
    const std::string name = label(r);
    if (name.find(filter) == std::string::npos) continue;
    const nf::Array x = nf::astype(nf::randn(r.shape) * 100, r.dtype);
    const std::string op = r.op;
    const auto statement = [&]() -> nf::Expr {
      if (op == "sum") return nf::sum(x, r.axes);
      if (op == "center") return x - nf::mean(x, r.axes);
      return nf::var(x, r.axes);
    };
    nf::Array y = statement();
    const double us = probe::median_wall_us([&] { y = statement(); }, 9, 2);
    std::printf("%s %.1f\n", name.c_str(), us);
    std::fflush(stdout);
  }
}
