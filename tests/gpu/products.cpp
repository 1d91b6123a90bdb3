#include "products.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "api/plan_cache.hpp"
#include "cuda/executor.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf::test {

Array host_uniform(const Shape& shape, DType t) {
  set_default_device(kCpu);
  Array a = astype(2.0 * rand(shape, f64) - 1.0, t);
  set_default_device(kGpu);
  return a;
}

double unit(DType t) {
  return t == f64 ? 0x1p-53 : 0x1p-24;
}

double half_ulp(DType t) {
  return t == f16 ? 0x1p-11 : t == bf16 ? 0x1p-8 : t == f32 ? 0x1p-24 : 0x1p-53;
}

double half_subnormal_step(DType t) {
  return t == f16 ? 0x1p-25 : t == bf16 ? 0x1p-134 : t == f32 ? 0x1p-150 : 0;
}

double product_rtol(std::int64_t k, DType t) {
  return 4 * std::sqrt(double(k)) * unit(t);
}

void check_within(const Array& got, const std::vector<double>& want,
                  const std::vector<double>& tol) {
  REQUIRE(got.device() == kGpu);
  const std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  std::size_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!(std::abs(g[i] - want[i]) <= tol[i]) && bad++ < 3) {
      first << "\n  element " << i << ": cpu " << want[i] << ", gpu " << g[i] << " (tolerance "
            << tol[i] << ")";
    }
  }
  INFO(bad << " of " << g.size() << " elements differ" << first.str());
  CHECK(bad == 0);
}

void compare_product(const Array& got, const Array& a, const Array& b, double rtol) {
  set_default_device(kCpu);
  const Array a64 = a.astype(f64), b64 = b.astype(f64);
  const Array product = matmul(a64, b64);
  const std::vector<double> want = product.to_vector<double>();
  const std::vector<double> scale = Array(matmul(abs(a64), abs(b64))).to_vector<double>();
  set_default_device(kGpu);
  REQUIRE(got.shape() == product.shape());
  std::vector<double> tol(want.size());
  for (std::size_t i = 0; i < tol.size(); ++i) {
    tol[i] = rtol * scale[i] + half_ulp(got.dtype()) * std::abs(want[i]) +
             half_subnormal_step(got.dtype());
  }
  check_within(got, want, tol);
}

void compare_product(const Array& got, const Array& a, const Array& b) {
  compare_product(got, a, b, product_rtol(a.shape().back(), got.dtype()));
}

bool runs_on_gpu(const Expr& e) {
  const Array out = empty(e.shape(), e.dtype());
  const Program p = make_program({e.node()});
  const std::vector<Array> outs{out};
  return cached_plan(cuda::backend(), p, outs, default_schedule_options())->prepared != nullptr;
}

}  // namespace nf::test
