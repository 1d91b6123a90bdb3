#include "core/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace nf {
namespace {

// Containers often see every core of the host but may use only a quota of
// them; threads beyond the quota only wait for each other.
int cgroup_quota_cores() {
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (!(f >> quota >> period) || quota == "max" || period <= 0) return 0;
  const long long q = std::atoll(quota.c_str());
  return q > 0 ? int((q + period - 1) / period) : 0;
}

}  // namespace

int usable_cpus() {
  static const int quota = cgroup_quota_cores();
  int n = int(std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (quota > 0) n = std::min(n, quota);
  return std::max(n, 1);
}

}  // namespace nf
