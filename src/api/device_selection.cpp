// Which device new arrays live on: NF_DEVICE, else set_default_device, else
// the first GPU when there is one, else the CPU.
#include <mutex>
#include <optional>
#include <string>

#include "core/config.hpp"
#include "cuda/devices.hpp"
#include "numfuse/device.hpp"
#include "numfuse/errors.hpp"

namespace nf {
namespace {

std::mutex g_mutex;
std::optional<Device> g_chosen;

// `s` is cpu, cuda or cuda:N, as config checked.
Device parse(const std::string& s) {
  if (s == "cpu") return Device::cpu();
  return {Device::Kind::cuda, s.size() > 5 ? std::stoi(s.substr(5)) : 0};
}

void check_available(Device d) {
  if (d.kind == Device::Kind::cuda && d.index >= cuda::device_count()) {
    throw CudaError(to_string(d) + " is not available: this machine has " +
                    std::to_string(cuda::device_count()) + " CUDA device(s)");
  }
}

}  // namespace

Device default_device() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_chosen) {
    const std::optional<std::string> env = config::read(config::Var::device);
    Device d = env ? parse(*env)
                   : (cuda::device_count() > 0 ? Device{Device::Kind::cuda, 0} : Device::cpu());
    check_available(d);
    g_chosen = d;
  }
  return *g_chosen;
}

void set_default_device(Device d) {
  check_available(d);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_chosen = d;
}

}  // namespace nf
