// numfuse_fuzz: a differential fuzzer. Generates random statements (case i
// of seed S is always the same one) and runs each on two backends from the
// same inputs: in --mode emulator the kernels a GPU would run, emulated on
// CPU threads, against the CPU interpreter; in --mode gpu the statement on
// cuda:0 against the CPU backend computing in f64. --mode misuse makes
// hostile calls instead (tests/fuzz/misuse.hpp). Prints a reproducer for
// every mismatch, then "N passed, M failed"; exits 1 if any case failed.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <numfuse/numfuse.hpp>

#include "compare.hpp"
#include "cuda/devices.hpp"
#include "generate.hpp"
#include "misuse.hpp"
#include "run_case.hpp"

namespace {

constexpr const char* kUsage = R"(usage: numfuse_fuzz [options]
  --mode emulator|gpu|misuse
                       emulator (default): generated kernels run in the kernel
                       emulator against the CPU interpreter; gpu: cuda:0 against
                       the CPU backend in f64 (exit 77 without a CUDA device);
                       misuse: hostile shapes, dtypes, scalars and environment
                       values on the default device must work or throw a user
                       error, leaving every array unchanged
  --seed S             the run's seed (default 1)
  --first I            the first case (default 0)
  --cases N            how many cases (default 100)
  --list, --print      print the statements as C++ without running them
  --verbose            print every statement and its outcome
  --self-test          check that the comparator catches perturbed results
)";

struct Options {
  nf::fuzz::Mode mode = nf::fuzz::Mode::emulator;
  std::uint64_t seed = 1, first = 0, cases = 100;
  bool print = false, verbose = false, self_test = false, environment_probe = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mode") {
      const std::string m = value();
      if (m != "emulator" && m != "gpu" && m != "misuse") {
        std::cerr << "unknown mode " << m << "\n" << kUsage;
        std::exit(2);
      }
      o.mode = m == "gpu"      ? nf::fuzz::Mode::gpu
               : m == "misuse" ? nf::fuzz::Mode::misuse
                               : nf::fuzz::Mode::emulator;
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--first") {
      o.first = std::stoull(value());
    } else if (a == "--cases") {
      o.cases = std::stoull(value());
    } else if (a == "--list" || a == "--print") {
      o.print = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--self-test") {
      o.self_test = true;
    } else if (a == "--environment-probe") {
      o.environment_probe = true;
    } else {
      std::cerr << (a == "--help" || a == "-h" ? "" : "unknown option " + a + "\n") << kUsage;
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  return o;
}

// Hostile calls on the default device (the GPU where there is one).
int run_misuse(const Options& o, const char* argv0) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::uint64_t passed = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = o.first; i < o.first + o.cases; ++i) {
    std::string code;
    const nf::fuzz::Outcome r = nf::fuzz::run_misuse_case(o.seed, i, &code, self);
    const std::string header = "case " + std::to_string(i) + " of seed " + std::to_string(o.seed);
    if (o.verbose || o.print) std::cout << "// " << header << "\n" << code << std::flush;
    if (r.ok) {
      ++passed;
      continue;
    }
    ++failed;
    std::cout << "MISUSE MISHANDLED in " << header << " (misuse)\nrerun: " << argv0
              << " --mode misuse --seed " << o.seed << " --first " << i << " --cases 1\n"
              << code << r.report << "\n"
              << std::flush;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "(" << o.cases << " cases in " << seconds << " s)\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.environment_probe) return nf::fuzz::run_environment_probe();
  if (o.mode == nf::fuzz::Mode::misuse) return run_misuse(o, argv[0]);
  // Every array is created on the CPU; the GPU mode copies its inputs over.
  nf::set_default_device(nf::Device::cpu());
  if (o.self_test) return nf::fuzz::self_test() ? 0 : 1;
  const bool gpu = o.mode == nf::fuzz::Mode::gpu;
  const char* mode = gpu ? "gpu" : "emulator";
  if (gpu && !o.print) {
    if (nf::cuda::device_count() == 0) {
      std::puts("no CUDA device: skipping");
      return 77;
    }
    nf::set_cpu_compute_dtype(nf::f64);
  }
  const nf::fuzz::GenerateOptions generate{gpu};
  std::uint64_t passed = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = o.first; i < o.first + o.cases; ++i) {
    const nf::fuzz::Statement s = nf::fuzz::generate(o.seed, i, generate);
    std::string walk;
    const nf::jit::ReduceLimits limits = nf::fuzz::emulator_limits(i, &walk);
    const std::string header = "case " + std::to_string(i) + " of seed " + std::to_string(o.seed) +
                               " (" + mode + (gpu ? "" : ", reductions walk as for " + walk) + ")";
    if (o.print) {
      std::cout << "// " << header << "\n" << nf::fuzz::to_cpp(s) << "\n";
      continue;
    }
    if (o.verbose) std::cout << "// " << header << "\n" << nf::fuzz::to_cpp(s) << std::flush;
    const nf::fuzz::Outcome r =
        gpu ? nf::fuzz::run_gpu_case(s) : nf::fuzz::run_emulated_case(s, limits);
    if (r.ok) {
      ++passed;
      if (o.verbose) std::cout << "ok\n\n";
      continue;
    }
    ++failed;
    std::cout << "MISMATCH in " << header << "\nrerun: " << argv[0] << " --mode " << mode
              << " --seed " << o.seed << " --first " << i << " --cases 1\n"
              << nf::fuzz::to_cpp(s) << r.report << "\n"
              << std::flush;
  }
  if (o.print) return 0;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "(" << o.cases << " cases in " << seconds << " s)\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
