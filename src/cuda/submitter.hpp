// The submitter: a thread that makes the driver's launch calls (and the frees
// queued behind them) for the threads that run statements. A launch costs the
// host some 3 µs on an H100's host, as much as a small kernel runs: made here,
// it overlaps the building of the next statement instead of preceding it.
//
// Jobs run in the order they were submitted, on every device's stream, before
// anything else numfuse queues there: stream() (devices.hpp) first waits for
// the jobs submitted before it, so a copy, a product or a synchronisation
// follows the launches ahead of it as if they had been made in place.
//
// The thread spins while jobs keep coming and sleeps after a pause. A job
// submitted while it sleeps is refused, and its caller does the work itself:
// a statement on its own then costs what it did without the submitter,
// rather than the thread's wake-up. It is not woken for a caller that may
// run on one CPU only (usable_cpus), where the two would take turns.
// NF_LAUNCH_THREAD=off refuses every job.
#pragma once

#include <cstddef>
#include <string>

namespace nf::cuda {

// A job's work, run on the submitter's thread with a copy of its payload. It
// reports a failure by setting `error` (what the caller would have thrown).
using JobRun = void (*)(const void* payload, std::string& error);

// The most payload a job carries.
constexpr std::size_t kJobPayloadBytes = 1024;

// Queues `run` with a copy of `payload`. Returns false, queueing nothing, when
// the caller must do the work itself; every job submitted before has then run.
bool submit(JobRun run, const void* payload, std::size_t bytes);

// While a device's stream is captured into a graph (capture.hpp), every job
// is refused, so that each launch is made by the thread that records it, in
// its order. Calls nest: jobs are taken again after as many accept_jobs().
void refuse_jobs();
void accept_jobs();

// Returns once every job submitted before has run. Throws CudaError with the
// message of the first job that failed since the last call, if any.
void wait_for_submitted();

}  // namespace nf::cuda
