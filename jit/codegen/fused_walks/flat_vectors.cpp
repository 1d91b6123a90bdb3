// Flat vectors: where every array is contiguous over the domain (or one
// value) and starts on a vector boundary, each thread moves `unroll` groups
// of `vector_width` elements of every array, each group with one vector load
// or store (16 bytes for the widest dtype); all groups are loaded before any
// is computed. The elements past the last whole group go one at a time.

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
    spec.unroll = vector_unroll(spec);
    return true;
  }

  std::string comment(const FusedSpec& s) const override {
    return "Flat vectors: every array is contiguous (or one value) and starts on a\n"
           "vector boundary; each thread moves " +
           std::to_string(s.unroll) + " group(s) of " + std::to_string(s.vector_width) +
           " elements of every array, one vector load or store\n"
           "a group, all loaded before any is computed; the elements past the last\n"
           "whole group go one at a time.";
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
    auto vec = [&](DType t) { return vector_ctype(t, s.vector_width); };
    open_vector_groups(k, w);
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
    compute_vector_groups(k, w, [&](std::size_t j) {
      const std::string J = std::to_string(j);
      return s.reads[j].access == Access::scalar ? "in" + J + "[0]" : "v_in" + J + "[u].v[k]";
    });
    w.close();
  }
};

}  // namespace

const FusedWalk& flat_vectors_walk() {
  static const FlatVectors walk;
  return walk;
}

}  // namespace nf::jit
