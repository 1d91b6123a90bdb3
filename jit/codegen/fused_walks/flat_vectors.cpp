// Flat vectors: where every array is contiguous over the domain (or one
// value) and starts on a vector boundary, each thread moves `unroll` groups
// of `vector_width` elements of every array, each group with one vector load
// or store (16 bytes for the widest dtype); all groups are loaded before any
// is computed. The elements past the last whole group go one at a time.
#include <algorithm>

#include "codegen/expressions.hpp"
#include "codegen/fused_kernel.hpp"
#include "codegen/fused_walk.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {
namespace {

class FlatVectors final : public FusedWalk {
 public:
  // Steps without coordinates (strided elements come first in fused_walks())
  // whose flat arrays allow vectors of two elements or more.
  bool applies(FusedSpec& spec) const override {
    if (spec.vector_width <= 1) return false;
    // A thread that issues several vector loads before computing keeps more
    // bytes in flight, which a compute-heavy kernel needs to stay at the copy
    // rate; the loaded values live in registers, so fewer for many operands.
    int streams = 0;
    for (const auto& o : spec.reads) streams += o.access != Access::scalar;
    streams += int(spec.writes.size());
    spec.unroll = std::clamp(8 / std::max(streams, 1), 1, 4);
    return true;
  }

  void loop(const FusedKernel& k, SourceWriter& w) const override {
    groups(k, w);
    const std::string W = std::to_string(k.spec().vector_width);
    k.element_loop(w, "n / " + W + " * " + W + " + first");
  }

 private:
  // The whole groups of vector_width elements.
  static void groups(const FusedKernel& k, SourceWriter& w) {
    const FusedSpec& s = k.spec();
    const std::string W = std::to_string(s.vector_width), U = std::to_string(s.unroll);
    auto vec = [&](DType t) { return "nf_vec<" + std::string(storage_ctype(t)) + ", " + W + ">"; };
    w.line("const nf_idx groups = n / " + W + ";");
    w.open("for (nf_idx g0 = (nf_idx)blockIdx.x * blockDim.x * " + U +
           " + threadIdx.x; g0 < groups;\n" + w.indent() +
           "     g0 += (nf_idx)gridDim.x * blockDim.x * " + U + ")");
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access == Access::scalar) continue;
      w.line(vec(s.reads[j].dtype) + " v_in" + std::to_string(j) + "[" + U + "] = {};");
    }
    w.line("#pragma unroll");
    w.open("for (int u = 0; u < " + U + "; ++u)");
    w.line("const nf_idx g = g0 + (nf_idx)u * blockDim.x;");
    w.open("if (g < groups)");
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access == Access::scalar) continue;
      const std::string J = std::to_string(j);
      w.line("v_in" + J + "[u] = *(const " + vec(s.reads[j].dtype) + "*)(in" + J + " + g * " + W +
             ");");
    }
    w.close();
    w.close();
    // Groups past the end compute on zeros and store nothing: no branch
    // separates the loads from the arithmetic.
    w.line("#pragma unroll");
    w.open("for (int u = 0; u < " + U + "; ++u)");
    w.line("const nf_idx g = g0 + (nf_idx)u * blockDim.x;");
    for (std::size_t j = 0; j < s.writes.size(); ++j) {
      w.line(vec(s.writes[j].dtype) + " v_out" + std::to_string(j) + ";");
    }
    w.line("#pragma unroll");
    w.open("for (int k = 0; k < " + W + "; ++k)");
    w.line("const nf_idx i = g * " + W + " + k;");
    k.element(w, [&](std::size_t j) {
      const std::string J = std::to_string(j);
      return s.reads[j].access == Access::scalar ? "in" + J + "[0]" : "v_in" + J + "[u].v[k]";
    });
    for (std::size_t j = 0; j < s.writes.size(); ++j) {
      const std::string J = std::to_string(j);
      w.line("v_out" + J + ".v[k] = " + store_expr(s.writes[j].dtype, "r" + J) + ";");
    }
    w.close();
    for (std::size_t j = 0; j < s.writes.size(); ++j) {
      const std::string J = std::to_string(j);
      w.line("if (g < groups) *(" + vec(s.writes[j].dtype) + "*)(out" + J + " + g * " + W +
             ") = v_out" + J + ";");
    }
    w.close();
    w.close();
  }
};

}  // namespace

const FusedWalk& flat_vectors_walk() {
  static const FlatVectors walk;
  return walk;
}

}  // namespace nf::jit
