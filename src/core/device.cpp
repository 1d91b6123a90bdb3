#include "numfuse/device.hpp"

#include <atomic>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {
namespace {
std::atomic<DType> g_cpu_compute{f32};
}  // namespace

std::string to_string(Device d) {
  return d.kind == Device::Kind::cpu ? "cpu" : "cuda:" + std::to_string(d.index);
}

void set_cpu_compute_dtype(DType t) {
  if (t != f32 && t != f64) {
    throw DTypeError("set_cpu_compute_dtype: expected f32 or f64, got " + std::string(name(t)));
  }
  g_cpu_compute = t;
}

DType cpu_compute_dtype() {
  return g_cpu_compute;
}

}  // namespace nf
