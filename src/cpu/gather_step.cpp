// Gather steps (numpy's take): each element of the output copied from the
// element of the array its index names, rows of the output's last dim at a
// time spread over the cores; a row copied whole where both lie contiguous.
#include <cstring>

#include "cpu/convert.hpp"
#include "cpu/steps.hpp"
#include "cpu/thread_pool.hpp"
#include "numfuse/errors.hpp"
#include "plan/gather_map.hpp"
#include "runtime/nf_ops.h"

namespace nf::cpu {
namespace {

std::int64_t index_at(const char* p, DType t) {
  switch (t) {
    case DType::u8:
      return *reinterpret_cast<const std::uint8_t*>(p);
    case DType::i32:
      return *reinterpret_cast<const std::int32_t*>(p);
    default:
      return *reinterpret_cast<const std::int64_t*>(p);
  }
}

// Where index v lands along an axis of length n: the generated kernel's rule.
std::int64_t landing(std::int64_t v, std::int64_t n, TakeMode mode) {
  switch (mode) {
    case TakeMode::wrap:
      return nf_take_wrap(v, n);
    case TakeMode::clip:
      return nf_take_clip(v, n);
    default:
      return nf_take_raise(v, n);
  }
}

char* bytes_of(const Array& a) {
  return static_cast<char*>(a.storage()->data) + a.offset() * std::int64_t(itemsize(a.dtype()));
}

}  // namespace

void run_gather(const Program& p, const Step& s, const Write& out, const Memory& mem) {
  const Node& t = *p.nodes[s.nodes[0]];
  const Array& idx = *mem[s.reads[1]];
  const Array& o = out.target;
  Array a = *mem[s.reads[0]];
  // Where the backend computes in f64 (set_cpu_compute_dtype), a stored array is read
  // as the f64 the output holds.
  if (a.dtype() != o.dtype()) {
    const Value v = view_or_load(a);
    a = Array(v.storage, v.ctype, v.shape, v.strides, v.offset);
  }
  const std::size_t size = itemsize(o.dtype());
  if (o.dtype() != a.dtype()) {
    throw InternalError("cpu gather: " + std::string(name(a.dtype())) + " elements into " +
                        std::string(name(o.dtype())));
  }
  const GatherMap m = gather_map(t, a.strides(), idx.strides());
  const Shape& dom = s.domain;
  const int rank = int(dom.size());
  if (numel(dom) == 0) return;
  const std::int64_t len = dom[rank - 1], rows = numel(dom) / len;
  const Strides& os = o.strides();
  const std::size_t isize = itemsize(idx.dtype());
  const char* const a0 = bytes_of(a);
  const char* const i0 = bytes_of(idx);
  char* const o0 = bytes_of(o);
  const bool whole_rows = m.indices[rank - 1] == 0 && m.array[rank - 1] == 1 && os[rank - 1] == 1;
  parallel_for(rows, [&](std::int64_t row) {
    // The row's coordinates, the last dim's at 0.
    std::int64_t rest = row, at_a = 0, at_i = 0, at_o = 0;
    for (int d = rank - 2; d >= 0; --d) {
      const std::int64_t c = rest % dom[d];
      rest /= dom[d];
      at_a += c * m.array[d];
      at_i += c * m.indices[d];
      at_o += c * os[d];
    }
    auto source = [&](std::int64_t j) {
      const std::int64_t v = index_at(i0 + (at_i + j * m.indices[rank - 1]) * isize, idx.dtype());
      return a0 + (at_a + j * m.array[rank - 1] + landing(v, m.extent, t.mode) * m.axis_stride) *
                      std::int64_t(size);
    };
    if (whole_rows) {
      std::memcpy(o0 + at_o * std::int64_t(size), source(0), std::size_t(len) * size);
      return;
    }
    for (std::int64_t j = 0; j < len; ++j) {
      std::memcpy(o0 + (at_o + j * os[rank - 1]) * std::int64_t(size), source(j), size);
    }
  });
}

}  // namespace nf::cpu
