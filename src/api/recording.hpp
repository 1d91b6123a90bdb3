// What the API's entry points do while a body is recorded (numfuse/record.hpp):
// a statement is kept by the recording, and run into the backend's capture or
// not at all; a copy between the host and a recorded device is refused.
#pragma once

#include <atomic>
#include <span>

#include "graph/node.hpp"
#include "numfuse/array.hpp"
#include "numfuse/expr.hpp"
#include "plan/program.hpp"

namespace nf {

namespace detail {
extern std::atomic<int> g_recordings;  // bodies being recorded, in all threads
}

// Whether any thread is recording: one load, all a statement pays otherwise.
inline bool recording_anywhere() {
  return detail::g_recordings.load(std::memory_order_relaxed) > 0;
}

// A statement made while something records: kept by this thread's recording
// (and run into its backend's capture, where the backend keeps one), or run
// as always. Throws ValueError for one a recording cannot take, naming why.
void run_or_record(const Program& p, std::span<const NodePtr> roots,
                   std::span<const Array> outputs);

// Throws ValueError where this thread records and `a = e` would make `a` a
// new array although `e` reads it: each replay would compute it again from
// a's values at the recording, where the user means to carry it forward.
void refuse_rebinding(const Array& a, const Expr& e);

// Throws ValueError where `d` is being recorded: `what` cannot be, `why`.
void refuse_while_recorded(Device d, const char* what, const char* why);

}  // namespace nf
