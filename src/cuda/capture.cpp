#include "cuda/capture.hpp"

#include <string>
#include <utility>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/devices.hpp"
#include "cuda/memory.hpp"
#include "cuda/submitter.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

class GraphReplay final : public Replay {
 public:
  GraphReplay(int device, cudaGraphExec_t exec, std::vector<std::shared_ptr<Storage>> kept)
      : device_(device), exec_(exec), kept_(std::move(kept)) {}
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  // The replays queued are let finish first; the memory kept then goes back
  // in stream order behind them. At exit the runtime may be gone already.
  ~GraphReplay() override {
    if (cudaStreamSynchronize(submission_stream(device_)) != cudaSuccess) cudaGetLastError();
    if (cudaGraphExecDestroy(exec_) != cudaSuccess) cudaGetLastError();
  }

  void run() const override { NF_CUDA_CHECK(cudaGraphLaunch(exec_, stream(device_))); }

 private:
  int device_;
  cudaGraphExec_t exec_;
  std::vector<std::shared_ptr<Storage>> kept_;
};

// Ends `device`'s capture; its graph, or null where the capture failed
// (`e` says why).
cudaGraph_t end_stream_capture(int device, cudaError_t& e) {
  cudaGraph_t graph = nullptr;
  e = cudaStreamEndCapture(submission_stream(device), &graph);
  if (e != cudaSuccess) cudaGetLastError();
  return graph;
}

}  // namespace

void begin_capture(int device) {
  check_device(device);
  refuse_jobs();
  begin_capture_memory(device);
  try {
    // stream() throws the failure of a launch made before, if any. Relaxed:
    // loading a kernel first compiled while recording, and taking memory by
    // cudaMalloc, are calls a stricter mode refuses.
    check(cudaStreamBeginCapture(stream(device), cudaStreamCaptureModeRelaxed),
          "cudaStreamBeginCapture(cuda:" + std::to_string(device) + ")");
  } catch (...) {
    end_capture_memory(device);
    accept_jobs();
    throw;
  }
}

std::shared_ptr<const Replay> end_capture(int device) {
  cudaError_t e = cudaSuccess;
  cudaGraph_t graph = end_stream_capture(device, e);
  std::vector<std::shared_ptr<Storage>> kept = end_capture_memory(device);
  accept_jobs();
  check(e, "cudaStreamEndCapture(cuda:" + std::to_string(device) +
               "): the statements could not be recorded as a CUDA graph");
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(e, "cudaGraphInstantiate(cuda:" + std::to_string(device) + ")");
  return std::make_shared<GraphReplay>(device, exec, std::move(kept));
}

void abandon_capture(int device) noexcept {
  cudaError_t e = cudaSuccess;
  if (cudaGraph_t graph = end_stream_capture(device, e)) cudaGraphDestroy(graph);
  end_capture_memory(device);
  accept_jobs();
}

}  // namespace nf::cuda
