#include "cuda/blas.hpp"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>

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

// The largest power of two, up to 16, that divides the operand's byte offset
// from its buffer's start (pool buffers are 256-byte aligned). The statement
// key holds offsets modulo 16 elements, so every statement sharing the plan
// has the same.
std::uint32_t alignment(const Layout& l) {
  const std::uint64_t bytes = std::uint64_t(l.offset) * itemsize(l.dtype);
  std::uint32_t a = 16;
  while (a > 1 && bytes % a) a /= 2;
  return a;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

std::optional<Types> types_of(DType t) {
  switch (t) {
    case f32:
      return Types{CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
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

}  // namespace

struct GemmPlan {
  int device = 0;
  cublasLtHandle_t handle = nullptr;  // the device's, for the life of the process
  void* workspace = nullptr;
  bool f64_scale = false;
  cublasLtMatmulDesc_t desc = nullptr;
  // cuBLASLt's A, B and C/D: B^T, A^T and C^T of the row-major product.
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo{};
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
                                          const Layout& c) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || c.shape.size() != 2) return nullptr;
  const std::optional<Types> types = types_of(c.dtype);
  // With its rows contiguous, a row-major operand's buffer read column-major
  // is the operand transposed; with its columns contiguous, the operand.
  const auto storage = [](const Layout& l) {
    return matrix_storage(l.shape[0], l.shape[1], l.strides[0], l.strides[1]);
  };
  const std::optional<MatrixStorage> sa = storage(a), sb = storage(b), sc = storage(c);
  if (!types || a.dtype != c.dtype || b.dtype != c.dtype || !sa || !sb || !sc || !sc->by_rows) {
    return nullptr;
  }
  const std::int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (m == 0 || n == 0 || k == 0) return nullptr;
  auto p = std::make_shared<GemmPlan>();
  p->device = device;
  p->f64_scale = types->scale == CUDA_R_64F;
  p->what = std::to_string(m) + " x " + std::to_string(k) + " . " + std::to_string(k) + " x " +
            std::to_string(n) + " " + std::string(name(c.dtype)) +
            " product on cuda:" + std::to_string(device);
  const auto call = [&](const char* f) { return std::string(f) + "(" + p->what + ")"; };

  // C^T (n x m) = B^T (n x k) . A^T (k x m), in cuBLASLt's column-major terms.
  check_blas(cublasLtMatmulDescCreate(&p->desc, types->compute, types->scale),
             call("cublasLtMatmulDescCreate"));
  const cublasOperation_t op_first = sb->by_rows ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_second = sa->by_rows ? CUBLAS_OP_N : CUBLAS_OP_T;
  check_blas(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_first,
                                            sizeof op_first),
             call("cublasLtMatmulDescSetAttribute"));
  check_blas(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                                            sizeof op_second),
             call("cublasLtMatmulDescSetAttribute"));
  const auto layout = [&](cublasLtMatrixLayout_t* l, bool by_rows, std::int64_t rows,
                          std::int64_t cols, std::int64_t ld) {
    // The buffer read column-major: the operand's transpose, or itself.
    const std::uint64_t r = std::uint64_t(by_rows ? cols : rows);
    const std::uint64_t cl = std::uint64_t(by_rows ? rows : cols);
    check_blas(cublasLtMatrixLayoutCreate(l, types->data, r, cl,
                                          std::max<std::int64_t>(ld, std::int64_t(r))),
               call("cublasLtMatrixLayoutCreate"));
  };
  layout(&p->first, sb->by_rows, k, n, sb->ld);
  layout(&p->second, sa->by_rows, m, k, sa->ld);
  layout(&p->out, true, m, n, sc->ld);

  const DeviceBlas& blas = device_blas(device);
  p->handle = blas.handle;
  p->workspace = blas.workspace->data;
  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), call("cublasLtMatmulPreferenceCreate"));
  const std::uint64_t ws = kWorkspaceBytes;
  const std::uint32_t align_first = alignment(b), align_second = alignment(a),
                      align_out = alignment(c);
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
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(blas.handle, p->desc, p->first, p->second,
                                                          p->out, p->out, pref, 1, &found, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  check_blas(s, call("cublasLtMatmulAlgoGetHeuristic"));
  if (count == 0) throw CudaError("cuBLASLt has no algorithm for the " + p->what);
  p->algo = found.algo;
  return p;
}

void run_gemm(const GemmPlan& p, const void* a, const void* b, void* c) {
  const float one32 = 1, zero32 = 0;
  const double one64 = 1, zero64 = 0;
  const void* one = p.f64_scale ? static_cast<const void*>(&one64) : &one32;
  const void* zero = p.f64_scale ? static_cast<const void*>(&zero64) : &zero32;
  check_blas(cublasLtMatmul(p.handle, p.desc, one, b, p.first, a, p.second, zero, c, p.out, c,
                            p.out, &p.algo, p.workspace, kWorkspaceBytes, stream(p.device)),
             "cublasLtMatmul(" + p.what + ")");
}

}  // namespace nf::cuda
