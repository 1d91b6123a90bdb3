#include "codegen/reduce_walks/streamed_rows.hpp"

#include "codegen/reduce_kernel.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {

// Every step the walks before it leave: nothing held (per stays 0).
bool StreamedRows::applies(ReduceSpec&, const ReduceLimits&) const {
  return true;
}

void StreamedRows::header(const ReduceKernel& k, SourceWriter& w) const {
  block_header(k, w, "Each pass reads the elements from memory again.\n");
}

std::string StreamedRows::group_loop(const ReduceKernel& k) const {
  return "for (nf_idx g = tr; live && g < groups; g += " + std::to_string(k.spec().tr) + ")";
}

void StreamedRows::element_loop(const ReduceKernel& k, SourceWriter& w,
                                const ElementPass& pass) const {
  const ReduceSpec& s = k.spec();
  const ReduceModel& m = k.model();
  w.open(group_loop(k));
  if (s.vec > 1) {
    for (int i : pass.values.computed) {
      if (!m.is_read(i)) continue;
      const int j = m.read_index(i);
      const std::string vt = m.vec_type(s.reads[j].dtype);
      w.line("const " + vt + " w_in" + std::to_string(j) + " = *(const " + vt + "*)(in" +
             std::to_string(j) + " + " + m.base(j) + " + g * " + std::to_string(s.vec) + ");");
    }
  }
  k.element_body(
      w, pass,
      [&](int j) { return s.vec > 1 ? "w_in" + std::to_string(j) + ".v[e]" : m.element(j, "r"); },
      true);
  w.close();
}

const ReduceWalk& streamed_rows_walk() {
  static const StreamedRows walk;
  return walk;
}

}  // namespace nf::jit
