// Matrix products and the random fills, each against the ceiling it cannot
// beat, measured in the same run on device 0:
//  - gemm_cudamat: cudamat's 2000x40000 . 40000x2000 f32 product, `C = dot(A, B)`
//    into a preallocated C, against cublasGemmEx on the same buffers, in full
//    f32 and in TF32 (nf::set_matmul_precision); "of_cublas" is numfuse's
//    TFLOP/s over cuBLAS's, "max_rel_diff" max|C - C_cublas| / max|C_cublas|;
//  - rbm_up: an RBM's up-pass, the hidden units sampled as 0/1 floats,
//    astype(rand_like(h) < sigmoid(dot(v, W) + b), f32), against the bare
//    product by cuBLAS ("rbm_gemm" rows: cuBLAS, and numfuse's dot); "of_gemm"
//    is the time over cuBLAS's, TFLOP/s count the product's 2*b*nv*nh;
//  - rand, randn, bernoulli: 2^26 f32 elements into a preallocated array,
//    against a device-to-device copy; GB/s counts each input read once and each
//    output written once, as the peer benchmark (shared/bench) does.
// cuBLAS runs on numfuse's stream with the default math mode (the compute type
// of each call alone decides whether tensor cores round to TF32). Device time
// by CUDA events, after warm-up, median of repeated batches. Prints JSON
// lines, then a table.
//
//   gemm_bench
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

void check(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "gemm_bench: %s failed: %s (%s)\n", call, cublasGetStatusString(s),
               cublasGetStatusName(s));
  std::abort();
}

// An array's first element in device memory (offsets count elements).
float* device_data(const nf::Array& a) {
  return static_cast<float*>(a.storage()->data) + a.offset();
}

// The direct cuBLAS call. Its handle works on numfuse's stream of device 0, so
// the events bench::time_us records there bracket cuBLAS's work as they do
// numfuse's. Device 0 is every thread's device until one sets another.
class Cublas {
 public:
  Cublas() {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, nf::cuda::stream(0)), "cublasSetStream");
    check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major c (m x n) = a (m x k) . b (k x n), contiguous f32: in cuBLAS's
  // column-major terms c^T (n x m) = b^T (n x k) . a^T (k x m), each buffer
  // read as its transpose without moving.
  void gemm(const nf::Array& a, const nf::Array& b, const nf::Array& c,
            cublasComputeType_t compute) {
    const int m = int(a.shape()[0]), k = int(a.shape()[1]), n = int(b.shape()[1]);
    const float one = 1, zero = 0;
    check(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, device_data(b), CUDA_R_32F,
                       n, device_data(a), CUDA_R_32F, k, &zero, device_data(c), CUDA_R_32F, n,
                       compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

// max |x - ref| / max |ref|: that two products computed the same thing, to
// their precision. A NaN on either side gives NaN (std::max would drop it).
double max_rel_diff(const nf::Array& x, const nf::Array& ref) {
  const std::vector<float> a = x.to_vector<float>(), r = ref.to_vector<float>();
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(r[i]));
    if (std::isnan(d)) return d;
    diff = std::max(diff, d);
    scale = std::max(scale, std::fabs(double(r[i])));
  }
  return diff / scale;
}

double tflops(double flops, double us) {
  return flops / (us * 1e-6) / 1e12;
}
double gbps(double bytes, double us) {
  return bytes / (us * 1e-6) / 1e9;
}

constexpr double kNone = -1;  // a figure a row does not have

struct Row {
  std::string work, shape, fw, note;
  double us, rate;
  double ratio = kNone;
  double diff = kNone;
  int gemms = -1, kernels = -1;
};

// Rows sharing a rate (TFLOP/s or GB/s) and a ratio's meaning, printed as a
// JSON line when added and as a table at the end.
struct Section {
  const char* rate_key;
  const char* rate_head;
  const char* ratio_key;
  const char* ratio_head;
  std::vector<Row> rows = {};

  void add(const Row& r) {
    rows.push_back(r);
    std::printf("{\"work\":\"%s\",\"shape\":\"%s\",\"fw\":\"%s\",", r.work.c_str(), r.shape.c_str(),
                r.fw.c_str());
    if (!r.note.empty()) std::printf("\"note\":\"%s\",", r.note.c_str());
    std::printf("\"us\":%.2f,\"%s\":%.2f", r.us, rate_key, r.rate);
    if (r.ratio != kNone) std::printf(",\"%s\":%.3f", ratio_key, r.ratio);
    if (r.diff != kNone) std::printf(",\"max_rel_diff\":%.2e", r.diff);
    if (r.gemms >= 0) std::printf(",\"gemms\":%d,\"kernels\":%d", r.gemms, r.kernels);
    std::printf("}\n");
  }

  void print() const {
    std::printf("\n%-13s %-20s %-10s %-6s %10s %9s %10s %9s %6s %7s\n", "work", "shape", "fw",
                "note", "us", rate_head, ratio_head, "rel diff", "gemms", "kernels");
    for (const Row& r : rows) {
      std::printf("%-13s %-20s %-10s %-6s %10.2f %9.2f ", r.work.c_str(), r.shape.c_str(),
                  r.fw.c_str(), r.note.c_str(), r.us, r.rate);
      if (r.ratio != kNone) {
        std::printf("%10.3f ", r.ratio);
      } else {
        std::printf("%10s ", "-");
      }
      if (r.diff != kNone) {
        std::printf("%9.1e ", r.diff);
      } else {
        std::printf("%9s ", "-");
      }
      if (r.gemms >= 0) {
        std::printf("%6d %7d\n", r.gemms, r.kernels);
      } else {
        std::printf("%6s %7s\n", "-", "-");
      }
    }
  }
};

// cudamat's product in one precision mode. `C = dot(A, B)` writes into C's
// buffer: C alone holds it and has the product's dtype and shape, so the
// assignment reuses it rather than rebinding C to a new array.
void gemm_cudamat(Section& s, Cublas& cublas, const nf::Array& A, const nf::Array& B,
                  nf::MatmulPrecision mode, cublasComputeType_t compute, const char* note) {
  const std::int64_t m = A.shape()[0], k = A.shape()[1], n = B.shape()[1];
  const std::string shape = nf::to_string({m, k, n});
  const double flops = 2.0 * double(m) * double(n) * double(k);
  nf::Array C = nf::empty({m, n}), C_cublas = nf::empty({m, n});

  const double cublas_us = bench::time_us([&] { cublas.gemm(A, B, C_cublas, compute); });
  s.add({"gemm_cudamat", shape, "cublas", note, cublas_us, tflops(flops, cublas_us)});

  // A product keeps the mode it was built with: set it before the statement.
  nf::set_matmul_precision(mode);
  const double us = bench::time_us([&] { C = nf::dot(A, B); });
  s.add({"gemm_cudamat", shape, "numfuse", note, us, tflops(flops, us), cublas_us / us,
         max_rel_diff(C, C_cublas)});
}

// The up-pass of an RBM with b visible vectors of nv units and nh hidden units.
void rbm(Section& s, Cublas& cublas, std::int64_t b, std::int64_t nv, std::int64_t nh) {
  const nf::Array v = nf::rand({b, nv});
  const nf::Array W = 0.1f * nf::randn({nv, nh});
  const nf::Array bias = nf::randn({nh});
  const auto up = [&] {
    const nf::Expr h = nf::sigmoid(nf::dot(v, W) + bias);
    return nf::astype(nf::rand_like(h) < h, nf::f32);
  };
  const std::string shape = nf::to_string({b, nv, nh});
  const double flops = 2.0 * double(b) * double(nv) * double(nh);
  nf::Array prod_cublas = nf::empty({b, nh}), prod = nf::empty({b, nh}), hs = nf::empty({b, nh});

  const double gemm_us =
      bench::time_us([&] { cublas.gemm(v, W, prod_cublas, CUBLAS_COMPUTE_32F); });
  s.add({"rbm_gemm", shape, "cublas", "fp32", gemm_us, tflops(flops, gemm_us), 1.0});

  const double dot_us = bench::time_us([&] { prod = nf::dot(v, W); });
  s.add({"rbm_gemm", shape, "numfuse", "fp32", dot_us, tflops(flops, dot_us), dot_us / gemm_us,
         max_rel_diff(prod, prod_cublas)});

  const nf::Plan plan = nf::plan({up()});
  const double up_us = bench::time_us([&] { hs = up(); });
  s.add({"rbm_up", shape, "numfuse", "fp32", up_us, tflops(flops, up_us), up_us / gemm_us, kNone,
         plan.gemm_count(), plan.kernel_count()});
}

}  // namespace

int main() {
  if (nf::cuda::device_count() == 0) {
    std::puts("gemm_bench: no CUDA device");
    return 77;
  }
  const auto& info = nf::cuda::device_info(0);
  std::printf("device: %s (%s, %d SMs)\n", info.name.c_str(), info.arch().c_str(), info.sm_count);
  nf::seed(1);
  Cublas cublas;

  Section gemm{"TFLOPs", "TFLOP/s", "of_cublas", "of cuBLAS"};
  {
    const nf::Array A = nf::randn({2000, 40000}), B = nf::randn({40000, 2000});
    gemm_cudamat(gemm, cublas, A, B, nf::MatmulPrecision::f32, CUBLAS_COMPUTE_32F, "fp32");
    gemm_cudamat(gemm, cublas, A, B, nf::tf32, CUBLAS_COMPUTE_32F_FAST_TF32, "tf32");
  }

  nf::set_matmul_precision(nf::f32);
  Section up{"TFLOPs", "TFLOP/s", "of_gemm", "/ cuBLAS"};
  rbm(up, cublas, 256, 2048, 4096);
  rbm(up, cublas, 128, 784, 4096);

  // Fills write 4 bytes an element; bernoulli(p) also reads p's 4.
  Section random{"GBps", "GB/s", "of_copy", "of copy"};
  {
    const std::int64_t n = std::int64_t(1) << 26;
    const std::size_t bytes = std::size_t(n) * 4;
    const std::string shape = nf::to_string(nf::Shape{n});
    double copy_gbps;
    {
      auto a = nf::cuda::allocate_device(0, bytes), b = nf::cuda::allocate_device(0, bytes);
      const double us =
          bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, bytes, 0); });
      copy_gbps = gbps(2.0 * bytes, us);
      random.add({"copy", shape, "cudaMemcpy", "", us, copy_gbps, 1.0});
    }
    const nf::Array p = nf::rand({n});
    nf::Array x = nf::empty({n});
    const auto fill = [&](const char* work, double traffic, const std::function<nf::Expr()>& e) {
      const double us = bench::time_us([&] { x = e(); });
      random.add(
          {work, shape, "numfuse", "", us, gbps(traffic, us), gbps(traffic, us) / copy_gbps});
    };
    fill("rand", bytes, [&] { return nf::rand({n}); });
    fill("randn", bytes, [&] { return nf::randn({n}); });
    fill("bernoulli_0.3", bytes, [&] { return nf::bernoulli({n}, 0.3); });
    fill("bernoulli_p", 2.0 * bytes, [&] { return nf::bernoulli(p); });
  }

  gemm.print();
  up.print();
  random.print();
  return 0;
}
