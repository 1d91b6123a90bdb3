#include "cuda/blas.hpp"

#include <cublasLt.h>

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/memory.hpp"
#include "numfuse/errors.hpp"

namespace nf::cuda {
namespace {

// cuBLASLt's advice for Hopper; older devices use less of it.
constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;

void check_blas(cublasStatus_t s, const std::string& call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(call + " failed: " + cublasLtGetStatusString(s) + " (" +
                  cublasLtGetStatusName(s) + ")");
}

// A device's handle and workspace, for the life of the process.
struct DeviceBlas {
  cublasLtHandle_t handle = nullptr;
  std::shared_ptr<Storage> workspace;
};

const DeviceBlas& device_blas(int device) {
  static std::mutex m;
  static std::map<int, DeviceBlas> all;
  std::lock_guard<std::mutex> lock(m);
  DeviceBlas& d = all[device];
  if (!d.handle) {
    DeviceGuard guard(device);
    check_blas(cublasLtCreate(&d.handle), "cublasLtCreate(cuda:" + std::to_string(device) + ")");
    d.workspace = allocate_device(device, kWorkspaceBytes);
  }
  return d;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

std::optional<Types> types_of(DType t, MatmulPrecision precision) {
  switch (t) {
    case f32:
      return Types{CUDA_R_32F,
                   precision == MatmulPrecision::tf32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                   : precision == MatmulPrecision::bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                                        : CUBLAS_COMPUTE_32F,
                   CUDA_R_32F};
    case f64:
      return Types{CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case f16:
      return Types{CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case bf16:
      return Types{CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    default:
      return std::nullopt;
  }
}

cublasLtEpilogue_t epilogue_of(const GemmOptions& o) {
  switch (o.activation) {
    case Activation::relu:
      return o.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu_tanh:
      return o.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::none:
      break;
  }
  return o.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// One operand's matrices: how BLAS reads each, and its strides over the
// product's batch axes (0 along the axes it is broadcast over).
struct Operand {
  MatrixStorage storage;
  Strides batch;
};

std::optional<Operand> operand(const Layout& l, const Shape& batch) {
  const std::size_t nd = l.shape.size();
  const auto s =
      matrix_storage(l.shape[nd - 2], l.shape[nd - 1], l.strides[nd - 2], l.strides[nd - 1]);
  if (!s) return std::nullopt;
  const Shape own(l.shape.begin(), l.shape.end() - 2);
  const Strides strides(l.strides.begin(), l.strides.end() - 2);
  return Operand{*s, broadcast_strides(own, strides, batch)};
}

// The batch as calls: cuBLASLt's strided batch takes the innermost batch
// axes that merge into one non-negative stride for A, B and C alike; a call
// is made for each index of the axes outside them. Per operand (A, B, C):
// strides and call starts in elements.
struct Batches {
  std::int64_t count = 1;
  std::array<std::int64_t, 3> stride{};
  std::vector<std::array<std::int64_t, 3>> starts{{0, 0, 0}};
};

Batches batches(const Shape& batch, const std::array<const Strides*, 3>& s) {
  Batches out;
  int d = int(batch.size()) - 1;
  for (; d >= 0; --d) {
    if (batch[d] == 1) continue;
    bool merges = true;
    for (int q = 0; q < 3; ++q) {
      const std::int64_t st = (*s[q])[d];
      merges = merges && st >= 0 && (out.count == 1 || st == out.stride[q] * out.count);
    }
    if (!merges) break;
    if (out.count == 1) {
      for (int q = 0; q < 3; ++q) out.stride[q] = (*s[q])[d];
    }
    out.count *= batch[d];
  }
  for (int e = 0; e <= d; ++e) {
    std::vector<std::array<std::int64_t, 3>> next;
    for (const auto& start : out.starts) {
      for (std::int64_t i = 0; i < batch[e]; ++i) {
        next.push_back(
            {start[0] + i * (*s[0])[e], start[1] + i * (*s[1])[e], start[2] + i * (*s[2])[e]});
      }
    }
    out.starts = std::move(next);
  }
  return out;
}

// The largest power of two, up to 16, that divides the byte offset of every
// matrix of an operand from its buffer's start (pool buffers are 256-byte
// aligned). The statement key holds offsets modulo 16 elements, so every
// statement sharing the plan has the same.
std::uint32_t alignment(const Layout& l, const Batches& b, int q) {
  std::vector<std::int64_t> elements{l.offset, b.stride[q]};
  for (const auto& start : b.starts) elements.push_back(l.offset + start[q]);
  std::uint32_t a = 16;
  for (const std::int64_t e : elements) {
    const std::uint64_t bytes = std::uint64_t(e < 0 ? -e : e) * itemsize(l.dtype);
    while (a > 1 && bytes % a) a /= 2;
  }
  return a;
}

// The heuristic's choice per product shape: statements that differ only in
// what surrounds a product share its algorithm.
struct AlgoCache {
  std::mutex mutex;
  std::map<std::vector<std::int64_t>, cublasLtMatmulAlgo_t> algos;
};

AlgoCache& algo_cache() {
  static AlgoCache c;
  return c;
}

}  // namespace

struct GemmPlan {
  int device = 0;
  cublasLtHandle_t handle = nullptr;  // the device's, for the life of the process
  void* workspace = nullptr;
  bool f64_scale = false;
  bool bias = false;
  std::size_t itemsize = 0;
  Batches batches;
  cublasLtMatmulDesc_t desc = nullptr;
  // cuBLASLt's A, B and C/D: B^T, A^T and C^T of the row-major product.
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo{};
  // The bias pointer is an attribute of the descriptor: a run sets it and
  // queues the product before another run of the plan may set its own.
  mutable std::mutex run_mutex;
  std::string what;  // for messages: "m x k . k x n f32 product on cuda:0"

  GemmPlan() = default;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan() {
    if (out) cublasLtMatrixLayoutDestroy(out);
    if (second) cublasLtMatrixLayoutDestroy(second);
    if (first) cublasLtMatrixLayoutDestroy(first);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

std::shared_ptr<const GemmPlan> plan_gemm(int device, const Layout& a, const Layout& b,
                                          const Layout& c, const GemmOptions& options) {
  const std::size_t nd = c.shape.size();
  if (a.shape.size() < 2 || b.shape.size() < 2 || nd < 2) return nullptr;
  const std::optional<Types> types = types_of(c.dtype, options.precision);
  const Shape batch(c.shape.begin(), c.shape.end() - 2);
  const std::optional<Operand> oa = operand(a, batch), ob = operand(b, batch),
                               oc = operand(c, batch);
  if (!types || a.dtype != c.dtype || b.dtype != c.dtype || !oa || !ob || !oc ||
      !oc->storage.by_rows || numel(c.shape) == 0) {
    return nullptr;
  }
  const std::int64_t m = c.shape[nd - 2], k = a.shape.back(), n = c.shape[nd - 1];
  if (k == 0) return nullptr;
  auto p = std::make_shared<GemmPlan>();
  p->device = device;
  p->f64_scale = types->scale == CUDA_R_64F;
  p->bias = options.bias;
  p->itemsize = itemsize(c.dtype);
  p->batches = batches(batch, {&oa->batch, &ob->batch, &oc->batch});
  p->what = (batch.empty() ? "" : to_string(batch) + " x ") + std::to_string(m) + " x " +
            std::to_string(k) + " . " + std::to_string(k) + " x " + std::to_string(n) + " " +
            std::string(name(c.dtype)) + " product on cuda:" + std::to_string(device);
  const auto call = [&](const char* f) { return std::string(f) + "(" + p->what + ")"; };
  const auto set_desc = [&](cublasLtMatmulDescAttributes_t attr, const auto& value) {
    check_blas(cublasLtMatmulDescSetAttribute(p->desc, attr, &value, sizeof value),
               call("cublasLtMatmulDescSetAttribute"));
  };

  // C^T (n x m) = B^T (n x k) . A^T (k x m), in cuBLASLt's column-major terms.
  check_blas(cublasLtMatmulDescCreate(&p->desc, types->compute, types->scale),
             call("cublasLtMatmulDescCreate"));
  const cublasOperation_t op_first = ob->storage.by_rows ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_second = oa->storage.by_rows ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasLtEpilogue_t epilogue = epilogue_of(options);
  set_desc(CUBLASLT_MATMUL_DESC_TRANSA, op_first);
  set_desc(CUBLASLT_MATMUL_DESC_TRANSB, op_second);
  set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  const Batches& bt = p->batches;
  const auto layout = [&](cublasLtMatrixLayout_t* l, bool by_rows, std::int64_t rows,
                          std::int64_t cols, std::int64_t ld, std::int64_t stride) {
    // The buffer read column-major: the operand's transpose, or itself.
    const std::uint64_t r = std::uint64_t(by_rows ? cols : rows);
    const std::uint64_t cl = std::uint64_t(by_rows ? rows : cols);
    check_blas(cublasLtMatrixLayoutCreate(l, types->data, r, cl,
                                          std::max<std::int64_t>(ld, std::int64_t(r))),
               call("cublasLtMatrixLayoutCreate"));
    if (bt.count == 1) return;
    const auto count = std::int32_t(bt.count);
    check_blas(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                sizeof count),
               call("cublasLtMatrixLayoutSetAttribute"));
    check_blas(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride),
               call("cublasLtMatrixLayoutSetAttribute"));
  };
  layout(&p->first, ob->storage.by_rows, k, n, ob->storage.ld, bt.stride[1]);
  layout(&p->second, oa->storage.by_rows, m, k, oa->storage.ld, bt.stride[0]);
  layout(&p->out, true, m, n, oc->storage.ld, bt.stride[2]);

  const DeviceBlas& blas = device_blas(device);
  p->handle = blas.handle;
  p->workspace = blas.workspace->data;
  const std::uint32_t align_first = alignment(b, bt, 1), align_second = alignment(a, bt, 0),
                      align_out = alignment(c, bt, 2);
  const std::vector<std::int64_t> key = {device,
                                         std::int64_t(c.dtype),
                                         std::int64_t(types->compute),
                                         op_first,
                                         op_second,
                                         epilogue,
                                         m,
                                         n,
                                         k,
                                         bt.count,
                                         ob->storage.ld,
                                         oa->storage.ld,
                                         oc->storage.ld,
                                         bt.stride[0],
                                         bt.stride[1],
                                         bt.stride[2],
                                         align_first,
                                         align_second,
                                         align_out};
  AlgoCache& cache = algo_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (const auto hit = cache.algos.find(key); hit != cache.algos.end()) {
    p->algo = hit->second;
    return p;
  }
  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), call("cublasLtMatmulPreferenceCreate"));
  const std::uint64_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                       sizeof ws);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                       &align_first, sizeof align_first);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                       &align_second, sizeof align_second);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_out,
                                       sizeof align_out);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_out,
                                       sizeof align_out);
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  // cuBLASLt asks the current device, not the handle's, what it can run.
  const DeviceGuard guard(device);
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(blas.handle, p->desc, p->first, p->second,
                                                          p->out, p->out, pref, 1, &found, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  // No algorithm (an epilogue some dtype lacks): the statement runs on host copies.
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && count == 0)) {
    return nullptr;
  }
  check_blas(s, call("cublasLtMatmulAlgoGetHeuristic"));
  p->algo = found.algo;
  cache.algos.emplace(key, found.algo);
  return p;
}

void run_gemm(const GemmPlan& p, const void* a, const void* b, void* c, const void* bias) {
  const float one32 = 1, zero32 = 0;
  const double one64 = 1, zero64 = 0;
  const void* one = p.f64_scale ? static_cast<const void*>(&one64) : &one32;
  const void* zero = p.f64_scale ? static_cast<const void*>(&zero64) : &zero32;
  std::unique_lock<std::mutex> lock(p.run_mutex, std::defer_lock);
  // cuBLASLt launches on the current device, whatever the stream's.
  const DeviceGuard guard(p.device);
  if (p.bias) {
    lock.lock();
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(
        p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (s != CUBLAS_STATUS_SUCCESS) check_blas(s, "cublasLtMatmulDescSetAttribute(" + p.what + ")");
  }
  const auto at = [&](const void* base, std::int64_t elements) {
    return static_cast<const char*>(base) + elements * std::int64_t(p.itemsize);
  };
  for (const auto& start : p.batches.starts) {
    void* d = const_cast<char*>(at(c, start[2]));
    const cublasStatus_t s = cublasLtMatmul(
        p.handle, p.desc, one, at(b, start[1]), p.first, at(a, start[0]), p.second, zero, d, p.out,
        d, p.out, &p.algo, p.workspace, kWorkspaceBytes, stream(p.device));
    // The message is made only on failure: a run allocates nothing.
    if (s != CUBLAS_STATUS_SUCCESS) check_blas(s, "cublasLtMatmul(" + p.what + ")");
  }
}

}  // namespace nf::cuda
