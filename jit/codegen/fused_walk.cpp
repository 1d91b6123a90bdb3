// What an elementwise walk does unless it says otherwise, and the order the
// walks are asked in.
#include "codegen/fused_walk.hpp"

#include <algorithm>

#include "codegen/expressions.hpp"
#include "codegen/fused_kernel.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {

bool FusedWalk::coordinates() const {
  return false;
}

// One element a thread each loop trip.
void FusedWalk::loop(const FusedKernel& k, SourceWriter& w) const {
  k.element_loop(w, "first");
}

bool computes_iota(const FusedSpec& spec) {
  for (int i : spec.step->nodes)
    if (spec.program->nodes[i]->op == OpId::iota) return true;
  return false;
}

int vector_unroll(const FusedSpec& spec) {
  int streams = 0;
  for (const auto& o : spec.reads) streams += o.access != Access::scalar;
  streams += int(spec.writes.size());
  return std::clamp(8 / std::max(streams, 1), 1, 4);
}

void open_vector_groups(const FusedKernel& k, SourceWriter& w) {
  const FusedSpec& s = k.spec();
  const std::string W = std::to_string(s.vector_width), U = std::to_string(s.unroll);
  w.line("const nf_idx groups = n / " + W + ";");
  w.open("for (nf_idx g0 = (nf_idx)blockIdx.x * blockDim.x * " + U +
         " + threadIdx.x; g0 < groups;\n" + w.indent() +
         "     g0 += (nf_idx)gridDim.x * blockDim.x * " + U + ")");
}

void compute_vector_groups(const FusedKernel& k, SourceWriter& w,
                           const std::function<std::string(std::size_t)>& read) {
  const FusedSpec& s = k.spec();
  const std::string W = std::to_string(s.vector_width), U = std::to_string(s.unroll);
  auto vec = [&](DType t) { return vector_ctype(t, s.vector_width); };
  // No branch separates the loads from the arithmetic.
  w.line("#pragma unroll");
  w.open("for (int u = 0; u < " + U + "; ++u)");
  w.line("const nf_idx g = g0 + (nf_idx)u * blockDim.x;");
  for (std::size_t j = 0; j < s.writes.size(); ++j) {
    w.line(vec(s.writes[j].dtype) + " v_out" + std::to_string(j) + ";");
  }
  w.line("#pragma unroll");
  w.open("for (int k = 0; k < " + W + "; ++k)");
  w.line("const nf_idx i = g * " + W + " + k;");
  k.element(w, read);
  for (std::size_t j = 0; j < s.writes.size(); ++j) {
    const std::string J = std::to_string(j);
    w.line("v_out" + J + ".v[k] = " + store_expr(s.writes[j].dtype, "r" + J) + ";");
  }
  w.close();
  for (std::size_t j = 0; j < s.writes.size(); ++j) {
    const std::string J = std::to_string(j);
    w.line("if (g < groups) nf_store_vector((" + vec(s.writes[j].dtype) + "*)(out" + J + " + g * " +
           W + "), v_out" + J + ");");
  }
  w.close();
}

// The order is the preference: tiles through shared memory wherever a view
// is permuted and arrays are written flat, with no iota; vectors along the
// collapsed dims wherever arrays are read through views and written flat,
// with no iota; coordinates wherever another array is a view or the step
// computes iota (whose values are coordinates), as no flat walk computes
// them; vectors where every flat array allows them; single elements for the
// rest.
const std::vector<const FusedWalk*>& fused_walks() {
  static const std::vector<const FusedWalk*> walks = {
      &permuted_tiles_walk(), &broadcast_vectors_walk(), &strided_elements_walk(),
      &flat_vectors_walk(),   &flat_elements_walk(),
  };
  return walks;
}

}  // namespace nf::jit
