// How many CPUs the calling thread may keep busy at once: what the CPU
// backend sizes its pool by, and whether numfuse's launch thread can run
// beside a statement's thread rather than take turns with it.
#pragma once

namespace nf {

// The CPUs of the calling thread's affinity mask (taskset, an MPI rank's
// binding), at most the cgroup's CPU quota rounded up (a container's
// --cpus); at least 1. The quota is read once per process.
int usable_cpus();

}  // namespace nf
