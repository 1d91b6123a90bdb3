// Collectives over MPI for the CPU backend's arrays. MPI has no 16-bit
// floats: f16 and bf16 combine through operations of numfuse's own, each
// pair of elements in f32 and rounded back, as NCCL does on a GPU.
#include <climits>
#include <cstdint>
#include <string>

#include "dist/transport.hpp"
#include "dist/world.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_defs.h"
#include "runtime/nf_half.h"

namespace nf::dist {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case f16:
    case bf16:
      return MPI_UINT16_T;
    case f32:
      return MPI_FLOAT;
    case f64:
      return MPI_DOUBLE;
    case i32:
      return MPI_INT32_T;
    case i64:
      return MPI_INT64_T;
    case u8:
    case bool_:
      return MPI_UINT8_T;
  }
  throw InternalError("dist: a dtype with no MPI type");
}

struct F16 {
  static float load(std::uint16_t h) { return nf_f16_bits_to_f32(h); }
  static std::uint16_t save(float f) { return nf_f32_to_f16_bits(f); }
};
struct BF16 {
  static float load(std::uint16_t h) { return nf_bf16_bits_to_f32(h); }
  static std::uint16_t save(float f) { return nf_f32_to_bf16_bits(f); }
};
struct Add {
  static float apply(float a, float b) { return a + b; }
};
struct Max {
  static float apply(float a, float b) { return a < b ? b : a; }
};
struct Min {
  static float apply(float a, float b) { return b < a ? b : a; }
};

template <class Half, class Combine>
void combine_halves(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = Half::save(Combine::apply(Half::load(a[i]), Half::load(b[i])));
  }
}

MPI_Op created(MPI_User_function* combine) {
  MPI_Op o;
  MPI_Op_create(combine, 1, &o);
  return o;
}

// Made once, and kept for the life of MPI (freeing them is optional).
template <class Half>
MPI_Op half_op(Op op) {
  static const MPI_Op add = created(combine_halves<Half, Add>);
  static const MPI_Op max = created(combine_halves<Half, Max>);
  static const MPI_Op min = created(combine_halves<Half, Min>);
  return op == Op::max ? max : op == Op::min ? min : add;
}

// Mean is a sum here, divided after.
MPI_Op mpi_op(Op op, DType t) {
  if (t == f16) return half_op<F16>(op);
  if (t == bf16) return half_op<BF16>(op);
  return op == Op::max ? MPI_MAX : op == Op::min ? MPI_MIN : MPI_SUM;
}

template <class T>
void divide(T* data, std::size_t count, int by) {
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<T>(data[i] / by);
}

template <class Half>
void divide_halves(std::uint16_t* data, std::size_t count, int by) {
  for (std::size_t i = 0; i < count; ++i) {
    data[i] = Half::save(Half::load(data[i]) / static_cast<float>(by));
  }
}

void divide(void* data, std::size_t count, DType t, int by) {
  switch (t) {
    case f16:
      return divide_halves<F16>(static_cast<std::uint16_t*>(data), count, by);
    case bf16:
      return divide_halves<BF16>(static_cast<std::uint16_t*>(data), count, by);
    case f32:
      return divide(static_cast<float*>(data), count, by);
    case f64:
      return divide(static_cast<double*>(data), count, by);
    default:
      throw InternalError("dist: a mean of a dtype collectives.cpp refuses");
  }
}

// MPI counts are ints.
int mpi_count(std::size_t count, const char* collective) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw ValueError(std::string("nf::dist::") + collective + " on the CPU backend moves at most " +
                     std::to_string(INT_MAX) + " elements a rank, not " + std::to_string(count));
  }
  return static_cast<int>(count);
}

class MpiTransport final : public Transport {
 public:
  void all_reduce(void* data, std::size_t count, DType dtype, Op op) override {
    MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count, "all_reduce"), mpi_type(dtype),
                  mpi_op(op, dtype), communicator());
    if (op == Op::mean) divide(data, count, dtype, size());
  }

  std::function<void()> all_reduce_beside(void* data, std::size_t count, DType dtype,
                                          Op op) override {
    all_reduce(data, count, dtype, op);
    return [] {};
  }

  void broadcast(void* data, std::size_t count, DType dtype, int root) override {
    MPI_Bcast(data, mpi_count(count, "broadcast"), mpi_type(dtype), root, communicator());
  }

  void all_gather(void* data, std::size_t count, DType dtype) override {
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, mpi_count(count, "all_gather"),
                  mpi_type(dtype), communicator());
  }

  void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype,
                      Op op) override {
    MPI_Reduce_scatter_block(send, recv, mpi_count(count, "reduce_scatter"), mpi_type(dtype),
                             mpi_op(op, dtype), communicator());
    if (op == Op::mean) divide(recv, count, dtype, size());
  }
};

}  // namespace

Transport& host_transport() {
  static MpiTransport t;
  return t;
}

}  // namespace nf::dist
