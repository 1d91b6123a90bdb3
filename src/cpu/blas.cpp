// OpenBLAS chooses its kernels once, while it loads, from the CPU's model
// number; a release older than the CPU does not know the model and falls back
// to its generic SSE3 kernels. Debian 12's OpenBLAS 0.3.21 does that on a
// 5th-generation Xeon (model 207): its 2000x40000 by 40000x2000 product took
// 1,777 ms there instead of 389 ms with its AVX-512 kernels (bench/RESULTS.md).
// What sgemm and dgemm can use is decided by the instruction sets, which the
// CPU reports whatever its model, so numfuse names the kernel family from them
// (OPENBLAS_CORETYPE, as OpenBLAS documents) and loads OpenBLAS itself: linked
// at build time, OpenBLAS would have chosen before any of numfuse's code ran.
#include "cpu/blas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string_view>

#include "cpu/thread_pool.hpp"
#include "numfuse/errors.hpp"

namespace nf::cpu {
namespace {

// Debian's name (its alternatives link to the pthread or OpenMP build), then
// the development link other distributions and local builds install.
constexpr const char* kLibraries[] = {"libopenblas.so.0", "libopenblas.so"};

// OpenBLAS's families for sgemm and dgemm on x86-64, from what the CPU can run.
// Its newer families (Cooperlake, SapphireRapids) run these same kernels for
// them; Zen 4 and 5 run AVX-512 too, and the SkylakeX kernels there are twice
// as fast as the Haswell ones (measured on a Zen 5).
const char* family_for_this_cpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

struct Loaded {
  void* handle = nullptr;
  std::string library;
  std::string chosen_by;
};

Loaded load() {
  for (const char* name : kLibraries) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      return {h, name, "OpenBLAS (it was loaded before numfuse's first product)"};
    }
  }
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  const char* family = user ? nullptr : family_for_this_cpu();
  // OpenBLAS reads the variable only while it loads: it is set for that
  // moment, and the process and its children keep the environment they had.
  if (family) setenv("OPENBLAS_CORETYPE", family, 1);
  Loaded loaded;
  std::string failures;
  for (const char* name : kLibraries) {
    loaded.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (loaded.handle) {
      loaded.library = name;
      break;
    }
    failures += std::string(failures.empty() ? "" : "; ") + dlerror();
  }
  if (family) unsetenv("OPENBLAS_CORETYPE");
  if (!loaded.handle) {
    throw Error(
        "the CPU backend's f32 and f64 products need OpenBLAS, and it could not be "
        "loaded (" +
        failures + "); on Debian: apt-get install libopenblas0");
  }
  loaded.chosen_by = user     ? "OPENBLAS_CORETYPE"
                     : family ? "numfuse, from the instruction sets the CPU reports"
                              : "OpenBLAS, from the CPU's model";
  return loaded;
}

template <class F>
F symbol(const Loaded& l, const char* name, bool required) {
  void* s = dlsym(l.handle, name);
  if (!s && required) {
    throw Error(l.library + " was loaded as the CPU backend's BLAS but has no " + name);
  }
  return reinterpret_cast<F>(s);
}

Blas make_blas() {
  const Loaded l = load();
  Blas b;
  b.library = l.library;
  b.chosen_by = l.chosen_by;
  b.sgemm = symbol<Blas::Sgemm>(l, "cblas_sgemm", true);
  b.dgemm = symbol<Blas::Dgemm>(l, "cblas_dgemm", true);
  // numfuse's pool cuts products into tiles, one OpenBLAS call of one thread
  // each (matmul.cpp): its grid fits the shape, where OpenBLAS 0.3.21's
  // threads left 2000x40000 by 40000x2000 at 0.86x numpy's newer OpenBLAS,
  // and a batch of small products runs one per thread. OpenBLAS's own
  // variables still win: then its calls run one by one, on its threads.
  using SetThreads = void (*)(int);
  using GetInt = int (*)();
  using GetText = char* (*)();
  if (auto set = symbol<SetThreads>(l, "openblas_set_num_threads", false);
      set && !std::getenv("OPENBLAS_NUM_THREADS") && !std::getenv("GOTO_NUM_THREADS")) {
    set(1);
    b.tiled = true;
  }
  if (auto get = symbol<GetInt>(l, "openblas_get_num_threads", false)) b.threads = get();
  if (auto core = symbol<GetText>(l, "openblas_get_corename", false)) b.kernels = core();
  // openblas_get_config() begins "OpenBLAS 0.3.21 DYNAMIC_ARCH ...".
  if (auto config = symbol<GetText>(l, "openblas_get_config", false)) {
    const std::string_view text = config();
    const std::size_t second_space = text.find(' ', text.find(' ') + 1);
    b.version = std::string(text.substr(0, second_space));
  }
  return b;
}

}  // namespace

const Blas& blas() {
  static const Blas b = make_blas();
  return b;
}

}  // namespace nf::cpu
