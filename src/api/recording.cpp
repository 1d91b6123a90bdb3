#include "api/recording.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/execute.hpp"
#include "graph/op_table.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/record.hpp"

namespace nf {

namespace detail {
std::atomic<int> g_recordings{0};
}

// A statement as recorded: its roots and outputs, which keep every array it
// names alive, and run again at each replay where no backend keeps it.
struct RecordedStatement {
  std::vector<NodePtr> roots;
  std::vector<Array> outputs;
};

struct Recording::State {
  Device device;
  std::vector<RecordedStatement> statements;
  std::shared_ptr<const Replay> replay;  // the backend's, or null
  bool backend_keeps = false;            // statements run into the backend's capture
  bool running = false;                  // one of them is running (its inner statements are its)
};

namespace {

thread_local Recording::State* t_recording = nullptr;

// The devices being recorded into a backend's capture, and the thread
// recording each: a statement from any other thread would be captured too.
struct Recorders {
  std::mutex mutex;
  std::vector<std::pair<Device, std::thread::id>> active;
};

Recorders& recorders() {
  static Recorders r;
  return r;
}

// The thread recording `d`, if any other than this one.
bool recorded_by_another_thread(Device d) {
  Recorders& r = recorders();
  std::lock_guard lock(r.mutex);
  return std::any_of(r.active.begin(), r.active.end(), [&](const auto& a) {
    return a.first == d && a.second != std::this_thread::get_id();
  });
}

// `d` marked as captured by this thread while in scope (where `captured`),
// and a recording counted.
class RecordingDevice {
 public:
  RecordingDevice(Device d, bool captured) : device_(d), captured_(captured) {
    if (!captured) {
      detail::g_recordings.fetch_add(1);
      return;
    }
    Recorders& r = recorders();
    std::lock_guard lock(r.mutex);
    for (const auto& a : r.active) {
      if (a.first == d) {
        throw ValueError("nf::record: " + to_string(d) +
                         " is being recorded by another thread already; one recording at a "
                         "time records a device");
      }
    }
    r.active.emplace_back(d, std::this_thread::get_id());
    detail::g_recordings.fetch_add(1);
  }
  ~RecordingDevice() {
    detail::g_recordings.fetch_sub(1);
    if (!captured_) return;
    Recorders& r = recorders();
    std::lock_guard lock(r.mutex);
    std::erase_if(r.active, [&](const auto& a) { return a.first == device_; });
  }
  RecordingDevice(const RecordingDevice&) = delete;
  RecordingDevice& operator=(const RecordingDevice&) = delete;

 private:
  Device device_;
  bool captured_;
};

// What a recording refuses of a statement running on `d`, found before it
// runs (on the CPU backend a recorded statement runs only at replays).
void refuse_unrecordable(const Program& p, Device d) {
  for (const NodePtr& n : p.nodes) {
    if (n->op == OpId::leaf && n->array->device() != d) {
      throw ValueError("nf::record: an array on " + to_string(n->array->device()) +
                       " was used in a statement running on " + to_string(d) +
                       " (numfuse moves no array between devices by itself)");
    }
    if (op_kind(n->op) == OpKind::random) {
      throw ValueError("nf::record: random numbers (" + std::string(op_name(n->op)) + " of shape " +
                       to_string(n->shape) +
                       ") cannot be recorded: every replay would draw the same ones; draw them "
                       "outside the recording");
    }
  }
}

void refuse_other_thread(Device d) {
  if (recorded_by_another_thread(d)) {
    throw ValueError("a statement on " + to_string(d) +
                     " ran while another thread records that device (nf::record): it would be "
                     "recorded into that thread's recording");
  }
}

}  // namespace

void run_or_record(const Program& p, std::span<const NodePtr> roots,
                   std::span<const Array> outputs) {
  Recording::State* r = t_recording;
  const Device d = outputs[0].device();
  if (!r || r->running) {
    if (!r) refuse_other_thread(d);
    return run_program(p, outputs);
  }
  if (d != r->device) {
    throw ValueError("nf::record records statements on " + to_string(r->device) +
                     " (the default device when it began); this statement runs on " + to_string(d));
  }
  refuse_unrecordable(p, d);
  r->statements.push_back({{roots.begin(), roots.end()}, {outputs.begin(), outputs.end()}});
  if (!r->backend_keeps) return;
  r->running = true;
  try {
    run_program(p, outputs);
  } catch (...) {
    r->running = false;
    throw;
  }
  r->running = false;
}

void refuse_rebinding(const Array& a, const Expr& e) {
  if (!t_recording || t_recording->running) return;
  std::vector<const Node*> todo{e.node().get()};
  std::unordered_set<const Node*> seen;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == OpId::leaf && n->array->storage() == a.storage()) {
      throw ValueError(
          "nf::record: `a = expr` where expr reads a (an array of shape " + to_string(a.shape()) +
          ") makes a a new array, so each replay would compute it again from a's values at the "
          "recording; update a in place to carry it from one replay to the next: `a() = expr`, "
          "`a += expr`");
    }
    for (const NodePtr& in : n->inputs) todo.push_back(in.get());
  }
}

void refuse_while_recorded(Device d, const char* what, const char* why) {
  const Recording::State* r = t_recording;
  if ((r && r->device == d) || recorded_by_another_thread(d)) {
    throw ValueError(std::string("nf::record: ") + what + " on " + to_string(d) +
                     " cannot be recorded: " + why);
  }
}

Recording::Recording(std::shared_ptr<const State> state) : state_(std::move(state)) {}

void Recording::replay() const {
  if (t_recording) {
    throw ValueError("nf::record: a recording cannot be replayed while this thread records");
  }
  if (state_->replay) return state_->replay->run();
  for (const RecordedStatement& s : state_->statements) execute(s.roots, s.outputs);
}

std::size_t Recording::statements() const {
  return state_->statements.size();
}

Device Recording::device() const {
  return state_->device;
}

Recording record(const std::function<void()>& body) {
  if (t_recording) {
    throw ValueError("nf::record: a body being recorded cannot record another");
  }
  auto state = std::make_shared<Recording::State>();
  state->device = default_device();
  const Backend& backend = backend_for(state->device);
  const int index = state->device.index;
  state->backend_keeps = backend.keeps_recordings();
  const RecordingDevice marked(state->device, state->backend_keeps);
  backend.begin_recording(index);
  t_recording = state.get();
  try {
    body();
  } catch (...) {
    t_recording = nullptr;
    if (state->backend_keeps) backend.abandon_recording(index);
    throw;
  }
  t_recording = nullptr;
  if (state->backend_keeps) {
    std::shared_ptr<const Replay> replay = backend.end_recording(index);
    // A recording of no statement replays nothing, and needs no launch.
    if (!state->statements.empty()) state->replay = std::move(replay);
  }
  return Recording(std::move(state));
}

}  // namespace nf
