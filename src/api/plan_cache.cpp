#include "api/plan_cache.hpp"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace nf {
namespace {

struct KeyHash {
  std::size_t operator()(const StatementKey& k) const { return std::size_t(k.hash); }
};

// A program that builds ever new structures (shapes that change every step)
// would grow the table without bound; past this size it starts over.
constexpr std::size_t kMaxEntries = 4096;

struct Table {
  std::shared_mutex mutex;
  std::unordered_map<StatementKey, std::shared_ptr<const CachedPlan>, KeyHash> plans;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

std::shared_ptr<const CachedPlan> find_plan(const StatementKey& key) {
  Table& t = table();
  std::shared_lock<std::shared_mutex> lock(t.mutex);
  auto it = t.plans.find(key);
  return it != t.plans.end() ? it->second : nullptr;
}

std::shared_ptr<const CachedPlan> remember_plan(StatementKey key,
                                                std::shared_ptr<const CachedPlan> plan) {
  Table& t = table();
  std::unique_lock<std::shared_mutex> lock(t.mutex);
  if (t.plans.size() >= kMaxEntries) t.plans.clear();
  return t.plans.emplace(std::move(key), std::move(plan)).first->second;
}

std::shared_ptr<const CachedPlan> cached_plan(const Backend& backend, const Program& p,
                                              std::span<const Array> outputs,
                                              const ScheduleOptions& options) {
  // Written over a key kept per thread, so that a hit allocates nothing. A
  // miss copies it for the table before planning, so that nothing planning
  // calls can overwrite it.
  thread_local StatementKey scratch;
  statement_key(p, outputs, options, scratch);
  if (auto hit = find_plan(scratch)) return hit;
  StatementKey key = scratch;
  // Two threads missing at once both plan; the kernel table still compiles
  // each kernel once, and either plan is right.
  auto plan = std::make_shared<CachedPlan>();
  plan->schedule = backend.schedule(p, outputs, options);
  plan->prepared = backend.prepare(p, plan->schedule, outputs);
  return remember_plan(std::move(key), std::move(plan));
}

}  // namespace nf
