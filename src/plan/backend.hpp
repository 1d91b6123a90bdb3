// The seam between the API and the backends. A statement's plan comes from
// the plan cache (src/api/plan_cache.hpp), prepared on first use by the
// backend of the device its outputs live on; the API then asks that backend
// to run it. A backend is one implementation of this interface (the CPU's in
// src/cpu/interpreter.cpp, the CUDA one's in src/cuda/executor.cpp) and one
// line in backend_for (src/api/execute.cpp); CONTRIBUTING.md lists the rest.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "core/storage.hpp"
#include "numfuse/array.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace nf {

// What a backend keeps of a plan between runs (loaded kernels, argument
// layouts, library plans); each backend derives its own.
class Prepared {
 public:
  virtual ~Prepared() = default;
};

// Statements a backend recorded to replay as one (a CUDA graph), made by
// end_recording.
class Replay {
 public:
  virtual ~Replay() = default;
  virtual void run() const = 0;
};

class Backend {
 public:
  // The schedule of `p` writing `outputs` that this backend runs (and
  // prepare() then takes): make_schedule's, planned again where its
  // kernels run faster so (jit::kernel_schedule).
  virtual Schedule schedule(const Program& p, std::span<const Array> outputs,
                            const ScheduleOptions& options) const = 0;
  // Everything about running schedule `s` of `p` into `outputs` that holds
  // for every statement of the same key (plan/statement_key.hpp). Null where
  // this backend cannot run the plan: the API then runs the statement on the
  // host over copies of its arrays.
  virtual std::shared_ptr<const Prepared> prepare(const Program& p, const Schedule& s,
                                                  std::span<const Array> outputs) const = 0;
  // Writes root i of `p` into outputs[i]. `prepared` came from prepare() for
  // a statement of the same key. No output overlaps elements the plan reads
  // elsewhere: the API computes such a statement into new arrays first.
  virtual void run(const Prepared& prepared, const Program& p, const Schedule& s,
                   std::span<const Array> outputs) const = 0;

  // Memory of `bytes` on device `index` of this backend's kind, and copies
  // between it and the host.
  virtual std::shared_ptr<Storage> allocate(std::size_t bytes, int index) const = 0;
  virtual void copy_from_host(void* dst, const void* host, std::size_t bytes, int index) const = 0;
  virtual void copy_to_host(void* host, const void* src, std::size_t bytes, int index) const = 0;

  // Recording (numfuse/record.hpp). A backend that keeps recordings keeps
  // the statements run on device `index` from begin_recording to
  // end_recording, rather than running them, and replays them as one (the
  // CUDA backend's graph); abandon_recording drops them, for a body that
  // failed. Where a backend does not (the CPU's), the API runs nothing while
  // recording, and runs the statements again one by one at each replay.
  virtual bool keeps_recordings() const { return false; }
  virtual void begin_recording(int /*index*/) const {}
  virtual std::shared_ptr<const Replay> end_recording(int /*index*/) const { return nullptr; }
  virtual void abandon_recording(int /*index*/) const {}

 protected:
  ~Backend() = default;
};

}  // namespace nf
