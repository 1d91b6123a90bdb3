// numfuse warmup: compiles the kernels of manifests into the disk cache, in
// parallel, so that programs later find every kernel there. Needs no GPU.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
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

// How a run shows its progress: a bar redrawn on a terminal; plain lines
// every few seconds for a log or a pipe, where a bar would be one endless
// line (CI, nohup); or nothing.
enum class Display { bar, lines, none };

// Counts shared by the workers, and the progress they show.
class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  Progress(std::size_t total, Display display, std::chrono::duration<double> every)
      : total_(total), display_(display), every_(every), start_(Clock::now()) {
    if (display_ == Display::lines && total_ > 0) reporter_ = std::thread([this] { report(); });
  }
  ~Progress() { stop(); }

  // Ends the reporting; the counts stay.
  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    wake_.notify_all();
    if (reporter_.joinable()) reporter_.join();
  }

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
    if (display_ == Display::bar) draw();
  }

  // "warmup: 120/480 kernels (compiled 100, cached 20, failed 0), 3.2/s, ETA 1m52s"
  void report() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, every_, [&] { return stopped_; })) {
      const std::size_t done = compiled_ + cached_ + failures_.size();
      const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      const double rate = seconds > 0 ? double(done) / seconds : 0;
      const std::string eta =
          rate > 0 ? duration_text(double(total_ - done) / rate) : std::string("unknown");
      std::printf(
          "warmup: %zu/%zu kernels (compiled %zu, cached %zu, failed %zu), %.1f/s, ETA %s\n", done,
          total_, compiled_, cached_, failures_.size(), rate, eta.c_str());
      std::fflush(stdout);
    }
  }

  static std::string duration_text(double seconds) {
    const long s = std::lround(seconds);
    char text[32];
    if (s < 60) {
      std::snprintf(text, sizeof text, "%lds", s);
    } else if (s < 3600) {
      std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
    } else {
      std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
    }
    return text;
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
  std::condition_variable wake_;
  std::size_t total_;
  Display display_;
  std::chrono::duration<double> every_;
  Clock::time_point start_;
  bool stopped_ = false;
  std::size_t compiled_ = 0, cached_ = 0;
  std::vector<Failure> failures_;
  std::thread reporter_;  // last: it starts once the rest is set
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
  const auto cannot_write = [&] {
    progress.failed({e.name, e.arch, "cannot write the cache: " + cache.read_only_reason()});
  };
  // Compiling what cannot be stored would only cost time.
  if (!cache.writable()) return cannot_write();
  try {
    jit::KernelImage image = jit::compile(e.source, e.arch);
    cache.store(key, {std::move(image), e.source});
    if (!cache.writable()) return cannot_write();
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

std::chrono::duration<double> progress_interval(const CommandLine& line) {
  const std::string text = line.value("--progress-every", "5");
  try {
    std::size_t used = 0;
    const double seconds = std::stod(text, &used);
    if (used == text.size() && seconds > 0 && seconds < 1e6) {
      return std::chrono::duration<double>(seconds);
    }
  } catch (const std::exception&) {
  }
  throw UsageError("--progress-every " + text + ": expected seconds, more than 0");
}

Display display(const CommandLine& line) {
  if (line.has("--quiet")) return Display::none;
  if (!::isatty(STDOUT_FILENO)) return Display::lines;
  return ::isatty(STDERR_FILENO) ? Display::bar : Display::none;
}

int run(const CommandLine& line) {
  if (line.positional.empty()) throw UsageError("name at least one manifest");
  const int jobs = jobs_option(line);
  const std::chrono::duration<double> every = progress_interval(line);
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
  jit::DiskCache cache(dir, jit::Warnings::off);
  if (!cache.enabled()) throw Error("cannot use " + dir.string() + ": " + cache.disabled_reason());

  const auto start = std::chrono::steady_clock::now();
  Progress progress(work.size(), display(line), every);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < std::min<int>(jobs, int(work.size())); ++t) {
    workers.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < work.size();) warm(work[i], cache, progress);
    });
  }
  for (std::thread& w : workers) w.join();
  progress.stop();
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
          "                      [--quiet] [--progress-every SECONDS]\n"
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
          "  --quiet          no progress: no bar on a terminal, no lines elsewhere\n"
          "  --progress-every SECONDS\n"
          "                   where stdout is not a terminal (a log, a pipe), a line every\n"
          "                   SECONDS (default 5): done/total, rate and time left\n"
          "\n"
          "Prints how many kernels were compiled, already cached, and failed with the\n"
          "reason; exits with 1 when any failed.\n",
          {"--arch", "-j", "--cache-dir", "--progress-every"},
          {"--quiet"},
          SIZE_MAX,
          run};
}

}  // namespace nf::tools
