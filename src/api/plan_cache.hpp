// Plans memoised by statement key: a statement whose structure has run
// before skips scheduling, code generation and the kernel lookup, and only
// binds its buffers and scalars (DESIGN.md, "How a statement runs").
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "cuda/executor.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"
#include "plan/statement_key.hpp"

namespace nf {

struct CachedPlan {
  Schedule schedule;
  std::shared_ptr<const cuda::Launches> launches;  // null where a product has no GPU plan
};

// The plan of `p` writing `outputs` on a GPU, made on first use. Thread-safe;
// entries hold no arrays, only structure and loaded kernels.
std::shared_ptr<const CachedPlan> cuda_plan(const Program& p, std::span<const Array> outputs,
                                            const ScheduleOptions& options);

// The table behind cuda_plan, apart so that a benchmark can time a hit where
// no GPU can prepare launches. find: the plan cached under `key`, or null.
// remember: caches `plan` under `key` unless one is there; returns the cached one.
std::shared_ptr<const CachedPlan> find_cuda_plan(const StatementKey& key);
std::shared_ptr<const CachedPlan> remember_cuda_plan(StatementKey key,
                                                     std::shared_ptr<const CachedPlan> plan);

}  // namespace nf
