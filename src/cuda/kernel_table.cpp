#include "cuda/kernel_table.hpp"

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "compile/disk_cache.hpp"
#include "compile/manifest.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/config.hpp"
#include "cuda/devices.hpp"

namespace nf::cuda {
namespace {

struct Table {
  std::shared_mutex mutex;
  // Futures make concurrent misses on one signature compile once.
  std::unordered_map<std::string, std::shared_future<LoadedKernel>> kernels;
  // Loaded kernels by address, stable for the life of the process.
  std::map<std::string, LoadedKernel> ready;
};

Table& table(int device) {
  static std::mutex m;
  static std::map<int, Table> tables;
  std::lock_guard<std::mutex> lock(m);
  return tables[device];
}

// NF_DUMP_KERNELS=dir: every kernel's source, as it is first used.
void dump(const std::string& name, const std::string& source) {
  const std::optional<std::string> dir = config::read(config::Var::dump_kernels);
  if (!dir) return;
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  std::ofstream(std::filesystem::path(*dir) / (name + ".cu")) << source;
}

}  // namespace

const LoadedKernel& find_or_load(int device, const std::string& signature, const std::string& name,
                                 const std::function<std::string()>& make_source) {
  Table& t = table(device);
  {
    std::shared_lock<std::shared_mutex> lock(t.mutex);
    auto it = t.ready.find(signature);
    if (it != t.ready.end()) return it->second;
  }
  std::promise<LoadedKernel> promise;
  std::shared_future<LoadedKernel> future;
  bool mine = false;
  {
    std::unique_lock<std::shared_mutex> lock(t.mutex);
    auto it = t.kernels.find(signature);
    if (it == t.kernels.end()) {
      future = promise.get_future().share();
      t.kernels.emplace(signature, future);
      mine = true;
    } else {
      future = it->second;
    }
  }
  if (mine) {
    try {
      const std::string source = make_source();
      dump(name, source);
      const std::string arch = device_info(device).arch();
      jit::record_kernel({name, arch, signature, source});
      const jit::KernelImage image = jit::obtain_image(source, arch);
      LoadedKernel k = load_kernel(device, image.data.data(), image.data.size(), name.c_str());
      k.launch_early = jit::arch_number(image.arch) >= 90;
      promise.set_value(k);
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::unique_lock<std::shared_mutex> lock(t.mutex);
      t.kernels.erase(signature);
      throw;
    }
  }
  const LoadedKernel k = future.get();
  std::unique_lock<std::shared_mutex> lock(t.mutex);
  return t.ready.emplace(signature, k).first->second;
}

}  // namespace nf::cuda
