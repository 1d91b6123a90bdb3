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

// The CUDA backend arrives with the JIT; until then every array lives on the CPU.
Device default_device() {
  return Device::cpu();
}

void set_default_device(Device d) {
  if (d.kind != Device::Kind::cpu) {
    throw CudaError("set_default_device(" + to_string(d) +
                    "): this build of numfuse has only the CPU backend");
  }
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
