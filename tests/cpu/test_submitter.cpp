// The submitter's thread (src/cuda/submitter.hpp), which makes launch calls
// for the statements' threads on a GPU. Its jobs are plain functions, so its
// order, its refusals and its errors are checked here without one.
#include <catch2/catch.hpp>

#include <sched.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/cpus.hpp"
#include "cuda/submitter.hpp"
#include "numfuse/errors.hpp"

namespace {

struct Record {
  std::vector<int>* seen;
  std::vector<std::thread::id>* threads;
  int value;
};

void record(const void* payload, std::string&) {
  const Record& r = *static_cast<const Record*>(payload);
  r.seen->push_back(r.value);
  r.threads->push_back(std::this_thread::get_id());
}

void fail(const void*, std::string& error) {
  error = "the job failed on purpose";
}

// Whether jobs back to back go to the submitter's thread: NF_LAUNCH_THREAD
// is on and this thread may use more than one CPU.
bool thread_takes_jobs() {
  return nf::config::switched_on(nf::config::Var::launch_thread, true) && nf::usable_cpus() > 1;
}

// Submits `run`, or runs it here where the submitter leaves it to its caller,
// as the launches do. Returns whether the submitter took it.
bool submit_or_run(nf::cuda::JobRun run, const void* payload, std::size_t bytes) {
  if (nf::cuda::submit(run, payload, bytes)) return true;
  std::string error;
  run(payload, error);
  return false;
}

// Submits `jobs` jobs numbered from 0 back to back, recording into `seen`
// and `threads`, and waits for them. Returns how many the submitter took.
int record_back_to_back(int jobs, std::vector<int>& seen, std::vector<std::thread::id>& threads) {
  int taken = 0;
  for (int i = 0; i < jobs; ++i) {
    const Record r{&seen, &threads, i};
    taken += submit_or_run(record, &r, sizeof r);
  }
  nf::cuda::wait_for_submitted();
  return taken;
}

// Back to back, all but the first few jobs go to the submitter's thread;
// NF_LAUNCH_THREAD=off, or one CPU, leaves every job to its caller.
void check_taken(int taken, int jobs) {
  if (thread_takes_jobs()) {
    CHECK(taken > jobs / 2);
  } else {
    CHECK(taken == 0);
  }
}

// Restores the calling thread's CPUs at the end of a test that pins it.
struct RestoreCpus {
  cpu_set_t all;
  RestoreCpus() { REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0); }
  ~RestoreCpus() { sched_setaffinity(0, sizeof all, &all); }
};

}  // namespace

TEST_CASE("the submitter runs jobs in the order submitted, its own or left to their callers",
          "[host]") {
  std::vector<int> seen;
  std::vector<std::thread::id> threads;
  const int jobs = 20000;
  const int taken = record_back_to_back(jobs, seen, threads);
  REQUIRE(seen.size() == std::size_t(jobs));
  for (int i = 0; i < jobs; ++i) {
    if (seen[i] != i) FAIL("job " << i << " ran as number " << seen[i]);
  }
  check_taken(taken, jobs);
  int elsewhere = 0;
  for (const std::thread::id& t : threads) elsewhere += t != std::this_thread::get_id();
  CHECK(elsewhere == taken);
}

TEST_CASE("a job's failure is thrown by the next wait for the submitter, once", "[host]") {
  if (!thread_takes_jobs()) return;  // NF_LAUNCH_THREAD=off or one CPU: no job runs there
  std::vector<int> seen;
  std::vector<std::thread::id> threads;
  // Jobs back to back wake the thread; then a failing job goes to it.
  bool failed_there = false;
  for (int attempt = 0; attempt < 100 && !failed_there; ++attempt) {
    for (int i = 0; i < 3; ++i) {
      const Record r{&seen, &threads, i};
      submit_or_run(record, &r, sizeof r);
    }
    const int unused = 0;
    failed_there = nf::cuda::submit(fail, &unused, sizeof unused);
  }
  REQUIRE(failed_there);
  try {
    nf::cuda::wait_for_submitted();
    FAIL("the failure was not thrown");
  } catch (const nf::CudaError& e) {
    CHECK_THAT(e.what(), Catch::Contains("the job failed on purpose"));
  }
  CHECK_NOTHROW(nf::cuda::wait_for_submitted());
  // Later jobs run.
  seen.clear();
  const Record r{&seen, &threads, 7};
  submit_or_run(record, &r, sizeof r);
  nf::cuda::wait_for_submitted();
  CHECK(seen == std::vector<int>{7});
}

TEST_CASE("a thread that may use one CPU launches its own jobs", "[host]") {
  // Pinned to one CPU, the submitter's spinning would take turns with the
  // caller; jobs back to back stay the caller's. Back on every CPU it had,
  // they go to the submitter again.
  const RestoreCpus restore;
  int first = 0;
  while (!CPU_ISSET(first, &restore.all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  CHECK(nf::usable_cpus() == 1);
  // Let the thread fall asleep (it spins for 200 us after its last job),
  // and the submitter read this thread's CPUs again (every 10 ms).
  nf::cuda::wait_for_submitted();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<int> seen;
  std::vector<std::thread::id> threads;
  const int jobs = 2000;
  CHECK(record_back_to_back(jobs, seen, threads) == 0);
  CHECK(seen.size() == std::size_t(jobs));

  REQUIRE(sched_setaffinity(0, sizeof restore.all, &restore.all) == 0);
  CHECK(nf::usable_cpus() >= 1);
  CHECK(nf::usable_cpus() <= CPU_COUNT(&restore.all));
  // The submitter reads a thread's CPUs again after 10 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  check_taken(record_back_to_back(jobs, seen, threads), jobs);
}
