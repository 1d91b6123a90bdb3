#include "kernel_emulator.hpp"

#include <dlfcn.h>

#include <unistd.h>
#include <algorithm>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace nf::test {
namespace {

// The CUDA built-ins generated kernels and jit/runtime use, for host threads.
// __shared__ arrays become statics: one block runs at a time in each copy of
// the kernel's library. The blocks of a cluster run together, one in each
// copy; a block finds another's shared memory at the same offset from that
// copy's anchor.
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
#define __cluster_dims__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct nf_emu_dim3 { unsigned x, y, z; };
static thread_local nf_emu_dim3 threadIdx, blockIdx;
static nf_emu_dim3 blockDim, gridDim;
static std::barrier<>* nf_emu_block;
static std::vector<std::unique_ptr<std::barrier<>>> nf_emu_warps;
static unsigned long long nf_emu_lanes[1024];
inline void __syncthreads() { nf_emu_block->arrive_and_wait(); }
static char nf_emu_anchor;
static std::barrier<>* nf_emu_cluster;
static char* const* nf_emu_anchors;
extern "C" char* nf_emu_anchor_address() { return &nf_emu_anchor; }
// Kernels arrive and then wait at once: waiting does both.
inline void __cluster_barrier_arrive() {}
inline void __cluster_barrier_wait() { nf_emu_cluster->arrive_and_wait(); }
inline void* __cluster_map_shared_rank(const void* p, unsigned rank) {
  return (char*)p - &nf_emu_anchor + nf_emu_anchors[rank];
}
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
inline unsigned __umulhi(unsigned x, unsigned y) {
  return unsigned((unsigned long long)x * y >> 32);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)((unsigned __int128)x * y >> 64);
}
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdividef(float a, float b) { return a / b; }
// Prefetching (jit/runtime/nf_reduce.h): copies complete at once.
#define NF_EMULATOR
static unsigned char* nf_emu_dynamic;
#define NF_DYNAMIC_SHARED(name) unsigned char* const name = nf_emu_dynamic
template <int Bytes>
inline void nf_fetch(void* shared, const void* global) { std::memcpy(shared, global, Bytes); }
inline void nf_fetched() {}
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
extern "C" void nf_emulate(unsigned blocks, unsigned threads, void** args, unsigned cluster,
                           unsigned rank, std::barrier<>* together, char* const* anchors,
                           std::size_t shared_bytes) {
  const std::unique_ptr<unsigned char[]> dynamic(new unsigned char[shared_bytes + 1]);
  nf_emu_dynamic = dynamic.get();
  blockDim = {threads, 1, 1};
  gridDim = {blocks, 1, 1};
  std::barrier<> block(threads);
  nf_emu_block = &block;
  nf_emu_cluster = together;
  nf_emu_anchors = anchors;
  nf_emu_warps.clear();
  for (unsigned w = 0; w < (threads + 31) / 32; ++w)
    nf_emu_warps.push_back(std::make_unique<std::barrier<>>(threads - w * 32 < 32 ? threads - w * 32 : 32));
  // One team of threads runs this copy's blocks in turn (rank, rank +
  // cluster, ...), meeting the cluster's other teams between blocks so that
  // no block starts while the last still uses its shared memory.
  std::vector<std::thread> team;
  for (unsigned t = 0; t < threads; ++t) {
    team.emplace_back([=] {
      threadIdx = {t, 0, 0};
      for (unsigned b = rank; b < blocks; b += cluster) {
        blockIdx = {b, 0, 0};
        )" +
         name + "(" + call + R"();
        nf_emu_cluster->arrive_and_wait();
      }
    });
  }
  for (auto& th : team) th.join();
}
)";
}

}  // namespace

EmulatedKernel::EmulatedKernel(const std::string& source, const std::string& name, int cluster) {
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
  // One copy of the library for each block of a cluster: each has its own
  // statics (shared memory), which a path of its own gives it.
  for (int r = 0; r < cluster; ++r) {
    const fs::path copy = dir / ("kernel" + std::to_string(r) + ".so");
    fs::copy_file(so, copy);
    void* library = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) throw std::runtime_error(std::string("emulator: ") + dlerror());
    copies_.push_back({library, reinterpret_cast<Entry>(dlsym(library, "nf_emulate")),
                       reinterpret_cast<char* (*)()>(dlsym(library, "nf_emu_anchor_address"))()});
    if (!copies_.back().entry)
      throw std::runtime_error("emulator: no entry point in " + so.string());
  }
  fs::remove_all(dir);
}

EmulatedKernel::~EmulatedKernel() {
  for (const Copy& c : copies_) dlclose(c.library);
}

void EmulatedKernel::launch(unsigned blocks, unsigned threads, void** args,
                            std::size_t shared_bytes) const {
  const unsigned cluster = unsigned(copies_.size());
  std::barrier<> together(std::ptrdiff_t(cluster * threads));
  std::vector<char*> anchors;
  for (const Copy& c : copies_) anchors.push_back(c.anchor);
  std::vector<std::thread> blocks_of_cluster;
  for (unsigned r = 0; r < cluster; ++r) {
    blocks_of_cluster.emplace_back([&, r] {
      copies_[r].entry(blocks, threads, args, cluster, r, &together, anchors.data(), shared_bytes);
    });
  }
  for (std::thread& t : blocks_of_cluster) t.join();
}

}  // namespace nf::test
