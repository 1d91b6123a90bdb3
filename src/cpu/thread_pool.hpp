// The CPU backend's worker threads. One pool per process, started on first
// use; the calling thread works beside them.
#pragma once

#include <cstdint>
#include <functional>

namespace nf::cpu {

// How many threads the CPU backend uses: OMP_NUM_THREADS when set, else the
// cores this process may run on (its affinity mask and cgroup CPU quota).
int thread_count();

// Calls fn(i) for every i in [0, count), spread over the pool, and returns
// when all are done. The first exception thrown by a call is rethrown here
// (the remaining items are skipped). A call made from inside another
// parallel_for, or while another thread's is running, runs serially.
void parallel_for(std::int64_t count, const std::function<void(std::int64_t)>& fn);

}  // namespace nf::cpu
