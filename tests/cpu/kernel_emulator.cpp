#include "kernel_emulator.hpp"

#include <dlfcn.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace nf::test {
namespace {

// The CUDA built-ins generated kernels and jit/runtime use, for host threads.
// __shared__ arrays become statics: one block runs at a time.
constexpr const char* kShim = R"(
#include <barrier>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct nf_emu_dim3 { unsigned x, y, z; };
static thread_local nf_emu_dim3 threadIdx, blockIdx;
static nf_emu_dim3 blockDim, gridDim;
static std::barrier<>* nf_emu_block;
static std::vector<std::unique_ptr<std::barrier<>>> nf_emu_warps;
static unsigned long long nf_emu_lanes[1024];
inline void __syncthreads() { nf_emu_block->arrive_and_wait(); }
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask) {
  static_assert(sizeof(T) <= 8);
  const unsigned t = threadIdx.x;
  std::memcpy(&nf_emu_lanes[t], &v, sizeof v);
  nf_emu_warps[t / 32]->arrive_and_wait();
  T out;
  std::memcpy(&out, &nf_emu_lanes[t ^ unsigned(mask)], sizeof out);
  nf_emu_warps[t / 32]->arrive_and_wait();
  return out;
}
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdividef(float a, float b) { return a / b; }
)";

// The kernel's parameter types, from its generated declaration.
std::vector<std::string> parameter_types(const std::string& source, const std::string& name) {
  const std::size_t open = source.find(name + "(\n");
  if (open == std::string::npos) throw std::runtime_error("emulator: no kernel " + name);
  const std::size_t close = source.find(") {", open);
  // One parameter per line, as code generation writes them.
  std::vector<std::string> types;
  std::size_t at = open + name.size() + 2;
  while (at < close) {
    const std::size_t end = std::min(source.find(",\n", at), close);
    std::string decl = source.substr(at, end - at);
    decl = decl.substr(decl.find_first_not_of(' '));
    types.push_back(decl.substr(0, decl.find_last_of(' ')));
    at = end + 2;
  }
  return types;
}

std::string entry(const std::string& name, const std::vector<std::string>& types) {
  std::string call;
  for (std::size_t i = 0; i < types.size(); ++i) {
    std::string t = types[i];
    const std::size_t r = t.find(" __restrict__");
    if (r != std::string::npos) t.erase(r);
    call += (i ? ", " : "") + std::string("*(") + t + "*)args[" + std::to_string(i) + "]";
  }
  return R"(
extern "C" void nf_emulate(unsigned blocks, unsigned threads, void** args) {
  blockDim = {threads, 1, 1};
  gridDim = {blocks, 1, 1};
  std::barrier<> block(threads);
  nf_emu_block = &block;
  nf_emu_warps.clear();
  for (unsigned w = 0; w < (threads + 31) / 32; ++w)
    nf_emu_warps.push_back(std::make_unique<std::barrier<>>(threads - w * 32 < 32 ? threads - w * 32 : 32));
  // One team of threads runs the blocks in turn, meeting between blocks so
  // that no block starts while the last still uses its shared memory.
  std::vector<std::thread> team;
  for (unsigned t = 0; t < threads; ++t) {
    team.emplace_back([=] {
      threadIdx = {t, 0, 0};
      for (unsigned b = 0; b < blocks; ++b) {
        blockIdx = {b, 0, 0};
        )" +
         name + "(" + call + R"();
        nf_emu_block->arrive_and_wait();
      }
    });
  }
  for (auto& th : team) th.join();
}
)";
}

}  // namespace

EmulatedKernel::EmulatedKernel(const std::string& source, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("numfuse-emulator-" + std::to_string(getpid()) + "-" + name);
  fs::create_directories(dir);
  const fs::path cpp = dir / "kernel.cpp", so = dir / "kernel.so";
  {
    std::ofstream out(cpp);
    out << kShim << source << entry(name, parameter_types(source, name));
  }
  const std::string command = std::string(NF_TEST_CXX) +
                              " -std=c++20 -O0 -w -fPIC -shared -pthread -o " + so.string() + " " +
                              cpp.string() + " 2> " + (dir / "log").string();
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(dir / "log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    throw std::runtime_error("emulator: the host compiler rejected " + cpp.string() + ":\n" + text);
  }
  library_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) throw std::runtime_error(std::string("emulator: ") + dlerror());
  entry_ = reinterpret_cast<void (*)(unsigned, unsigned, void**)>(dlsym(library_, "nf_emulate"));
  fs::remove_all(dir);
  if (!entry_) throw std::runtime_error("emulator: no entry point in " + so.string());
}

EmulatedKernel::~EmulatedKernel() {
  if (library_) dlclose(library_);
}

void EmulatedKernel::launch(unsigned blocks, unsigned threads, void** args) const {
  entry_(blocks, threads, args);
}

}  // namespace nf::test
