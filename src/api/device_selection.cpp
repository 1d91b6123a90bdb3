// Which device new arrays live on: NF_DEVICE, else set_default_device, else
// the first GPU when there is one, else the CPU.
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "cuda/devices.hpp"
#include "numfuse/device.hpp"
#include "numfuse/errors.hpp"

namespace nf {
namespace {

std::mutex g_mutex;
std::optional<Device> g_chosen;

Device parse(const std::string& s) {
  if (s == "cpu") return Device::cpu();
  if (s.rfind("cuda", 0) == 0) {
    const int index = s.size() > 5 && s[4] == ':' ? std::stoi(s.substr(5)) : 0;
    return {Device::Kind::cuda, index};
  }
  throw ValueError("NF_DEVICE=" + s + ": expected cpu, cuda or cuda:N");
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
    const char* env = std::getenv("NF_DEVICE");
    Device d = env && *env
                   ? parse(env)
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
