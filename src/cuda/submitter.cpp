#include "cuda/submitter.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/config.hpp"
#include "core/cpus.hpp"
#include "numfuse/errors.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nf::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// How long the thread spins after its last job before it sleeps, and how
// close two refused jobs must come for the second to wake it: statements
// issued back to back come within a few microseconds of each other.
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr std::uint64_t kSlots = 64;

// Whether the calling thread may run beside the submitter's thread
// (usable_cpus above 1). Read again at most every 10 ms: a read costs about
// a microsecond, and a thread on one CPU asks at every other statement.
bool runs_beside(Clock::time_point now) {
  thread_local Clock::time_point checked{};
  thread_local bool beside = false;
  if (checked == Clock::time_point{} || now - checked > std::chrono::milliseconds(10)) {
    beside = usable_cpus() > 1;
    checked = now;
  }
  return beside;
}

void relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

struct Job {
  JobRun run = nullptr;
  alignas(16) unsigned char payload[kJobPayloadBytes];
};

// A ring of jobs: any thread submits (one at a time), one thread runs them.
class Submitter {
 public:
  Submitter() : thread_([this] { loop(); }) {}

  bool submit(JobRun run, const void* payload, std::size_t bytes) {
    if (bytes > kJobPayloadBytes) {
      drain();
      return false;
    }
    std::lock_guard lock(submit_mutex_);
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    if (stopping_.load(std::memory_order_relaxed)) {
      drain();
      return false;
    }
    if (asleep_.load() && head_.load() == t) {
      // Nothing queued and nobody spinning: the caller is as quick. Calls
      // that come back to back wake the thread for the ones after them,
      // where it can run beside them; on one CPU it would spin in their
      // place (chain8 of (128, 784) took 64 us a statement on one CPU, 5 to
      // 11 on sixteen: H100 host, bench/RESULTS.md).
      const Clock::time_point now = Clock::now();
      if (now - last_refused_ < kSpin && runs_beside(now)) wake();
      last_refused_ = now;
      return false;
    }
    while (t - head_.load(std::memory_order_acquire) >= kSlots) relax();
    Job& job = jobs_[t % kSlots];
    job.run = run;
    std::memcpy(job.payload, payload, bytes);
    tail_.store(t + 1);
    // It may have gone to sleep after the check above, before seeing this job.
    if (asleep_.load()) wake();
    return true;
  }

  void drain() const {
    const std::uint64_t t = tail_.load(std::memory_order_acquire);
    while (head_.load(std::memory_order_acquire) < t) relax();
  }

  // The first failure since the last call, or an empty string.
  std::string take_error() {
    if (!failed_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(error_mutex_);
    failed_.store(false, std::memory_order_relaxed);
    return std::move(error_);
  }

  // At exit, before the CUDA runtime tears down: the jobs left run, then the
  // thread ends; later jobs are the callers' own.
  void stop() {
    {
      std::lock_guard lock(submit_mutex_);
      stopping_.store(true);
      wake();
    }
    thread_.join();
  }

 private:
  void wake() {
    asleep_.store(false);
    wakes_.fetch_add(1);
    wakes_.notify_one();
  }

  void loop() {
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    Clock::time_point idle_since{};  // starts asleep: the first job is its caller's own
    for (;;) {
      if (h != tail_.load(std::memory_order_acquire)) {
        run(jobs_[h % kSlots]);
        head_.store(++h, std::memory_order_release);
        idle_since = Clock::now();
        continue;
      }
      if (stopping_.load()) return;
      if (Clock::now() - idle_since < kSpin) {
        relax();
        continue;
      }
      const std::uint32_t seen = wakes_.load();
      asleep_.store(true);
      if (h == tail_.load() && !stopping_.load()) wakes_.wait(seen);
      asleep_.store(false);
      idle_since = Clock::now();
    }
  }

  void run(const Job& job) {
    std::string error;
    try {
      job.run(job.payload, error);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty()) return;
    std::lock_guard lock(error_mutex_);
    if (!failed_.load(std::memory_order_relaxed)) error_ = std::move(error);
    failed_.store(true, std::memory_order_release);
  }

  Job jobs_[kSlots];
  std::mutex submit_mutex_;
  std::atomic<std::uint64_t> tail_{0};  // jobs submitted
  std::atomic<std::uint64_t> head_{0};  // jobs run
  std::atomic<bool> asleep_{true};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> wakes_{0};
  Clock::time_point last_refused_{};  // under submit_mutex_
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::string error_;
  std::thread thread_;
};

// Made at the first job, never destroyed: frees of static arrays come after
// every destructor, and find it stopped.
Submitter* the_submitter(bool start) {
  static std::atomic<Submitter*> made{nullptr};
  Submitter* s = made.load(std::memory_order_acquire);
  if (s || !start) return s;
  static const bool on = config::switched_on(config::Var::launch_thread, true);
  if (!on) return nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    made.store(new Submitter, std::memory_order_release);
    // Registered after the CUDA runtime started (a job is only submitted
    // once a stream exists), so it runs before the runtime's own teardown.
    std::atexit([] { made.load()->stop(); });
  });
  return made.load(std::memory_order_acquire);
}

std::atomic<int> g_refusing{0};

}  // namespace

bool submit(JobRun run, const void* payload, std::size_t bytes) {
  if (g_refusing.load(std::memory_order_relaxed) > 0) [[unlikely]] {
    if (Submitter* s = the_submitter(false)) s->drain();
    return false;
  }
  Submitter* s = the_submitter(true);
  return s && s->submit(run, payload, bytes);
}

void refuse_jobs() {
  g_refusing.fetch_add(1);
  // A failure of the jobs drained is thrown by the next wait, as before.
  if (Submitter* s = the_submitter(false)) s->drain();
}

void accept_jobs() {
  g_refusing.fetch_sub(1);
}

void wait_for_submitted() {
  Submitter* s = the_submitter(false);
  if (!s) return;
  s->drain();
  if (std::string error = s->take_error(); !error.empty()) throw CudaError(error);
}

}  // namespace nf::cuda
