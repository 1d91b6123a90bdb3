// The structure of a statement: everything its schedule and kernels depend
// on, nothing they take as parameters. Two statements with equal keys run
// the same kernels with different scalars, seeds and buffers, so the plan of
// the first serves the second (a warm statement skips planning entirely).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "numfuse/array.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf {

struct StatementKey {
  std::vector<std::uint64_t> words;
  std::uint64_t hash = 0;
  bool operator==(const StatementKey& o) const { return hash == o.hash && words == o.words; }
};

StatementKey statement_key(const Program& p, std::span<const Array> outputs,
                           const ScheduleOptions& options);
// The same, written over `key`, whose words keep their capacity: a caller
// that reuses one key makes a statement's key without allocating.
void statement_key(const Program& p, std::span<const Array> outputs, const ScheduleOptions& options,
                   StatementKey& key);

}  // namespace nf
