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

StreamedRows::GroupRange StreamedRows::group_range(const ReduceKernel&) const {
  return {"", "groups"};
}

void StreamedRows::element_loop(const ReduceKernel& k, SourceWriter& w,
                                const ElementPass& pass) const {
  const ReduceSpec& s = k.spec();
  const ReduceModel& m = k.model();
  const GroupRange range = group_range(k);
  const std::string step = std::to_string(s.tr);
  const std::string first = range.base.empty() ? "tr" : range.base + " + tr";
  w.open("if (live)");
  if (pass.stage % 2 == 1) {
    w.open("for (nf_idx g = " + first + "; g < " + range.end + "; g += " + step + ")");
  } else {
    // Every other pass takes the groups backwards: where an output's
    // elements do not all stay in L2, those the pass before read last do.
    const std::string span = range.base.empty() ? range.end : range.end + " - " + range.base;
    w.open("for (nf_idx i = (" + span + " - tr + " + std::to_string(s.tr - 1) + ") / " + step +
           "; i-- > 0;)");
    w.line("const nf_idx g = " + first + " + i * " + step + ";  // backwards");
  }
  if (s.vec > 1) {
    for (int i : pass.values.computed) {
      if (!m.is_read(i)) continue;
      const int j = m.read_index(i);
      const std::string vt = m.vec_type(s.reads[j].dtype);
      w.line("const " + vt + " w_in" + std::to_string(j) + " = *(const " + vt + "*)(" +
             m.group_at(j, "g") + ");");
    }
  }
  k.element_body(
      w, pass,
      [&](int j) {
        return s.pairs     ? m.pair_word(j, "r")
               : s.vec > 1 ? "w_in" + std::to_string(j) + ".v[e]"
                           : m.element(j, "r");
      },
      true);
  w.close();
  w.close();
}

const ReduceWalk& streamed_rows_walk() {
  static const StreamedRows walk;
  return walk;
}

}  // namespace nf::jit
