// numfuse warmup: compiles the kernels of manifests into the disk cache, in
// parallel, so that programs later find every kernel there. Needs no GPU.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "compile/disk_cache.hpp"
#include "compile/manifest.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "numfuse/errors.hpp"
#include "tools/cache_access.hpp"
#include "tools/commands.hpp"

namespace nf::tools {
namespace {

struct Failure {
  std::string kernel, arch, reason;
};

// Counts shared by the workers, and the progress bar they redraw.
class Progress {
 public:
  Progress(std::size_t total, bool bar) : total_(total), bar_(bar) {}

  void compiled() {
    finish([&] { ++compiled_; });
  }
  void cached() {
    finish([&] { ++cached_; });
  }
  void failed(Failure f) {
    finish([&] { failures_.push_back(std::move(f)); });
  }

  std::size_t compiled_count() const { return compiled_; }
  std::size_t cached_count() const { return cached_; }
  const std::vector<Failure>& failures() const { return failures_; }

 private:
  template <class F>
  void finish(F&& count) {
    const std::lock_guard<std::mutex> lock(mutex_);
    count();
    if (bar_) draw();
  }

  void draw() const {
    const std::size_t done = compiled_ + cached_ + failures_.size();
    const int width = 30;
    const int filled = total_ ? int(width * done / total_) : width;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu  compiled %zu, cached %zu, failed %zu",
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done,
                 total_, compiled_, cached_, failures_.size());
    if (done == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

  std::mutex mutex_;
  std::size_t total_;
  bool bar_;
  std::size_t compiled_ = 0, cached_ = 0;
  std::vector<Failure> failures_;
};

// The first line of an error: NVRTC's first error is what a reader needs.
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void warm(const jit::ManifestEntry& e, jit::DiskCache& cache, Progress& progress) {
  if (!e.intact) {
    return progress.failed({e.name, e.arch,
                            "its source does not match the hash recorded with it (the manifest "
                            "was edited or damaged)"});
  }
  const std::string key = jit::image_key(e.source, e.arch);
  if (cache.load(key)) return progress.cached();
  try {
    jit::KernelImage image = jit::compile(e.source, e.arch);
    cache.store(key, {std::move(image), e.source});
    if (!cache.enabled()) {
      return progress.failed(
          {e.name, e.arch, "cannot write the cache: " + cache.disabled_reason()});
    }
    progress.compiled();
  } catch (const Error& error) {
    progress.failed({e.name, e.arch, first_line(error.what())});
  }
}

std::set<std::string> parse_archs(const std::string& list) {
  std::set<std::string> archs;
  std::stringstream in(list);
  for (std::string arch; std::getline(in, arch, ',');) {
    if (!jit::is_device_arch(arch)) {
      throw UsageError("--arch " + list + ": \"" + arch +
                       "\" is not a GPU architecture; expected sm_ and a number, such as sm_90");
    }
    archs.insert(arch);
  }
  if (archs.empty()) throw UsageError("--arch needs at least one arch, such as sm_90");
  return archs;
}

int jobs_option(const CommandLine& line) {
  const std::string text = line.value("-j", std::to_string(std::thread::hardware_concurrency()));
  try {
    std::size_t used = 0;
    const int n = std::stoi(text, &used);
    if (used == text.size() && n >= 1) return n;
  } catch (const std::exception&) {
  }
  throw UsageError("-j " + text + ": expected a number of parallel compilations, 1 or more");
}

int run(const CommandLine& line) {
  if (line.positional.empty()) throw UsageError("name at least one manifest");
  const int jobs = jobs_option(line);
  const std::optional<std::set<std::string>> wanted =
      line.options.count("--arch") ? std::optional(parse_archs(line.value("--arch")))
                                   : std::nullopt;

  // One job per distinct (arch, source); the others are counted as skipped.
  std::vector<jit::ManifestEntry> work;
  std::set<std::string> seen;
  std::map<std::string, std::size_t> skipped;  // by the arch they were recorded for
  std::set<std::string> archs_found;
  std::size_t records = 0;
  for (const std::string& manifest : line.positional) {
    for (jit::ManifestEntry& e : jit::read_manifest(manifest)) {
      ++records;
      archs_found.insert(e.arch);
      if (wanted && !wanted->count(e.arch)) {
        ++skipped[e.arch];
        continue;
      }
      if (seen.insert(e.arch + " " + jit::source_hash(e.source)).second) {
        work.push_back(std::move(e));
      }
    }
  }

  const std::filesystem::path dir = cache_dir(line);
  jit::DiskCache cache(dir);
  if (!cache.enabled()) throw Error("cannot use " + dir.string() + ": " + cache.disabled_reason());

  const auto start = std::chrono::steady_clock::now();
  Progress progress(work.size(), ::isatty(STDERR_FILENO) && !line.has("--quiet"));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < std::min<int>(jobs, int(work.size())); ++t) {
    workers.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < work.size();) warm(work[i], cache, progress);
    });
  }
  for (std::thread& w : workers) w.join();
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;

  std::printf("warmup: %zu kernels from %zu records into %s (-j %d) in %.1f s\n", work.size(),
              records, cache.dir().c_str(), jobs, seconds.count());
  std::printf("  compiled        %zu\n", progress.compiled_count());
  std::printf("  already cached  %zu\n", progress.cached_count());
  std::printf("  failed          %zu\n", progress.failures().size());
  for (const Failure& f : progress.failures()) {
    std::printf("    %s (%s): %s\n", f.kernel.c_str(), f.arch.c_str(), f.reason.c_str());
  }
  for (const auto& [arch, n] : skipped) {
    std::printf("  skipped         %zu recorded for %s (add it to --arch to compile them)\n", n,
                arch.c_str());
  }
  if (wanted) {
    for (const std::string& arch : *wanted) {
      if (!archs_found.count(arch)) {
        std::printf(
            "  note: nothing was recorded for %s; record with NF_TARGET_ARCH=%s (CPU) or "
            "on such a GPU\n",
            arch.c_str(), arch.c_str());
      }
    }
  }
  return progress.failures().empty() ? 0 : 1;
}

}  // namespace

Command warmup_command() {
  return {"warmup",
          "compile the kernels of manifests into the disk cache, without a GPU",
          "usage: numfuse warmup MANIFEST... [--arch sm_80,sm_90] [-j N] [--cache-dir DIR]\n"
          "                      [--quiet]\n"
          "\n"
          "Compiles every kernel the manifests list into the kernel cache, N at a time,\n"
          "so that programs find them there and compile nothing. Record a manifest by\n"
          "running a program with NF_KERNEL_MANIFEST=path, on a GPU or on the CPU\n"
          "backend (NF_DEVICE=cpu, with NF_TARGET_ARCH=sm_XX for the GPU it is for).\n"
          "Kernels are generated for one arch, so each record is compiled for the arch\n"
          "it was recorded for.\n"
          "\n"
          "  --arch LIST      compile only the records of these archs (comma-separated);\n"
          "                   the rest are counted as skipped. Default: every record\n"
          "  -j N             parallel compilations (default: the number of cores)\n"
          "  --cache-dir DIR  the cache to fill (default: NF_CACHE_DIR, else\n"
          "                   $XDG_CACHE_HOME/numfuse, else ~/.cache/numfuse)\n"
          "  --quiet          no progress bar\n"
          "\n"
          "Prints how many kernels were compiled, already cached, and failed with the\n"
          "reason; exits with 1 when any failed.\n",
          {"--arch", "-j", "--cache-dir"},
          {"--quiet"},
          run};
}

}  // namespace nf::tools
