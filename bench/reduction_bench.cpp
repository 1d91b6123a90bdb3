// Row reductions fused with their elementwise consumers: layer normalisation
// of every row (the mission line) and softmax; and the variance over rows,
// columns and all elements, against a device-to-device copy of the same bytes
// measured in the same run. Device time by CUDA events, after warm-up, median
// of repeated batches; GB/s counts the input read once and, where the result
// is a matrix, the output written once. On the small shape also the host's wall clock
// per statement with a warm kernel cache. Prints JSON lines, then a table.
//
//   reduction_bench [--quick | --shapes RxC[,RxC...]]
//
// --shapes measures those matrices only (with the small shape's wall clock):
// a class of shapes, such as every row length, rather than the list below.
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "bench_util.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/memory.hpp"

namespace {

struct Workload {
  const char* name;
  std::function<nf::Expr(const nf::Array&)> expr;
  bool writes_matrix = true;  // else a vector or a scalar, whose bytes are not counted
};

nf::Expr layernorm(const nf::Array& x) {
  const float eps = 1e-5f;
  return nf::reciprocal(nf::sqrt(nf::var(x, 1) + eps)) * (x - nf::mean(x, 1));
}

nf::Expr softmax(const nf::Array& x) {
  return nf::exp(x - nf::max(x, 1)) / nf::sum(nf::exp(x - nf::max(x, 1)), 1);
}

struct Row {
  std::string work, shape;
  double us, gbps, of_copy;
  int kernels;  // -1: not a statement of numfuse's
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (nf::cuda::device_count() == 0) {
    std::puts("reduction_bench: no CUDA device");
    return 77;
  }
  const auto& info = nf::cuda::device_info(0);
  std::printf("device: %s (%s, %d SMs)\n", info.name.c_str(), info.arch().c_str(), info.sm_count);
  nf::seed(1);

  const std::vector<Workload> workloads = {
      {"layernorm", layernorm},
      {"softmax", softmax},
      {"var-rows", [](const nf::Array& x) { return nf::var(x, 1); }, false},
      {"var-columns", [](const nf::Array& x) { return nf::var(x, 0); }, false},
      {"var-all", [](const nf::Array& x) { return nf::var(x); }, false}};
  // The shapes, and rows too long for one block to hold (a cluster
  // of blocks shares each where the device has clusters).
  std::vector<std::pair<int, int>> shapes = {
      {8192, 8192}, {32768, 1024}, {1024, 32768}, {512, 65536}};
  if (quick) shapes.clear();
  shapes.insert(shapes.end(), {{4096, 4096}, {128, 784}});
  if (argc > 2 && std::strcmp(argv[1], "--shapes") == 0) {
    shapes.clear();
    for (const char* s = argv[2]; *s;) {
      int r = 0, c = 0, used = 0;
      if (std::sscanf(s, "%dx%d%n", &r, &c, &used) != 2 || r <= 0 || c <= 0) {
        std::fprintf(stderr, "reduction_bench: --shapes wants RxC[,RxC...], got \"%s\"\n", s);
        return 2;
      }
      shapes.emplace_back(r, c);
      s += used + (s[used] == ',');
    }
  }

  std::vector<Row> rows;
  for (auto [r, c] : shapes) {
    nf::Array x = nf::randn({r, c});
    const std::string shape = nf::to_string(x.shape());
    const std::size_t bytes = std::size_t(r) * std::size_t(c) * 4;
    // The copy reads the matrix once and writes it once; a workload reads it
    // once, and writes it once if its result is a matrix.
    const auto gbps = [&](double us, bool writes) {
      return (writes ? 2.0 : 1.0) * double(bytes) / (us * 1e-6) / 1e9;
    };

    double copy_us;
    {
      auto a = nf::cuda::allocate_device(0, bytes), b = nf::cuda::allocate_device(0, bytes);
      copy_us =
          bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, bytes, 0); });
    }
    rows.push_back({"copy", shape, copy_us, gbps(copy_us, true), 1.0, -1});
    std::printf(
        "{\"work\":\"copy\",\"shape\":\"%s\",\"fw\":\"cudaMemcpy\",\"us\":%.2f,"
        "\"GBps\":%.1f}\n",
        shape.c_str(), copy_us, gbps(copy_us, true));

    nf::Array y;
    for (const Workload& w : workloads) {
      const int kernels = nf::plan({w.expr(x)}).kernel_count();
      const double us = bench::time_us([&] { y = w.expr(x); });
      // Of the copy's bandwidth: the bytes moved per second over the copy's.
      const double of_copy = gbps(us, w.writes_matrix) / gbps(copy_us, true);
      rows.push_back({w.name, shape, us, gbps(us, w.writes_matrix), of_copy, kernels});
      std::printf(
          "{\"work\":\"%s\",\"shape\":\"%s\",\"fw\":\"numfuse\",\"us\":%.2f,"
          "\"GBps\":%.1f,\"of_copy\":%.3f,\"kernels\":%d}\n",
          w.name, shape.c_str(), us, gbps(us, w.writes_matrix), of_copy, kernels);
    }
  }

  // Host cost of a statement whose kernels are cached: on a small matrix the
  // wall clock per call, not the device, bounds how fast a program runs.
  std::vector<std::pair<std::string, double>> walls;
  {
    nf::Array x = nf::randn({128, 784});
    nf::Array y;
    for (const Workload& w : workloads) {
      y = w.expr(x);
      nf::cuda::synchronize(0);
      const double us = bench::wall_us([&] { y = w.expr(x); }, quick ? 200 : 1000);
      walls.emplace_back(std::string(w.name) + "-wall", us);
      std::printf(
          "{\"work\":\"%s-wall\",\"shape\":\"(128, 784)\",\"fw\":\"numfuse\",\"us\":%.2f}\n",
          w.name, us);
    }
  }

  std::printf("\n%-15s %-14s %10s %9s %8s %8s\n", "work", "shape", "us", "GB/s", "of copy",
              "kernels");
  for (const Row& r : rows) {
    std::printf("%-15s %-14s %10.2f %9.1f %7.1f%% ", r.work.c_str(), r.shape.c_str(), r.us, r.gbps,
                100 * r.of_copy);
    if (r.kernels < 0) {
      std::printf("%8s\n", "-");
    } else {
      std::printf("%8d\n", r.kernels);
    }
  }
  for (const auto& [work, us] : walls) {
    std::printf("%-15s %-14s %10.2f %9s %8s %8s\n", work.c_str(), "(128, 784)", us, "-", "-", "-");
  }
  return 0;
}
