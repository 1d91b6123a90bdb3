// Plans memoised by statement key: a statement whose structure has run
// before skips scheduling, code generation and the kernel lookup, and only
// binds its buffers and scalars (CONTRIBUTING.md, "How a statement runs").
// One table serves every backend: the key names the outputs' device.
#pragma once

#include <memory>
#include <span>

#include "plan/backend.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"
#include "plan/statement_key.hpp"

namespace nf {

struct CachedPlan {
  Schedule schedule;
  // What the backend keeps of it; null where the backend cannot run it.
  std::shared_ptr<const Prepared> prepared;
};

// The plan of `p` writing `outputs` on `backend`, the backend of the
// outputs' device, made on first use. Thread-safe; entries hold no arrays,
// only structure and what the backend prepared.
std::shared_ptr<const CachedPlan> cached_plan(const Backend& backend, const Program& p,
                                              std::span<const Array> outputs,
                                              const ScheduleOptions& options);

// The table behind cached_plan, apart so that a benchmark can time a hit
// where no GPU can prepare launches. find: the plan cached under `key`, or
// null. remember: caches `plan` under `key` unless one is there; returns the
// cached one.
std::shared_ptr<const CachedPlan> find_plan(const StatementKey& key);
std::shared_ptr<const CachedPlan> remember_plan(StatementKey key,
                                                std::shared_ptr<const CachedPlan> plan);

}  // namespace nf
