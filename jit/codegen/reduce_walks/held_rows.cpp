#include "codegen/reduce_walks/held_rows.hpp"

#include <algorithm>
#include <vector>

#include "codegen/reduce_kernel.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {

bool HeldRows::hold(ReduceSpec& spec, const ReduceLimits& limits) {
  const std::int64_t held = (groups_of(spec) + spec.tr - 1) / spec.tr;
  if (held > held_groups_at_most(spec, limits)) return false;
  spec.per = int(std::max<std::int64_t>(held, 1));
  spec.whole = lanes_of(spec).whole(spec);
  return true;
}

bool HeldRows::applies(ReduceSpec& spec, const ReduceLimits& limits) const {
  return hold(spec, limits);
}

std::string HeldRows::guard(const ReduceSpec& spec, const std::string& live) {
  return spec.whole ? live : live + " && g < groups";
}

void HeldRows::open_groups(const ReduceKernel& k, SourceWriter& w, const std::string& live) const {
  const ReduceSpec& s = k.spec();
  w.line("#pragma unroll");
  w.open("for (int k = 0; k < " + std::to_string(s.per) + "; ++k)");
  w.line("const nf_idx g = " + first_group(k) + "tr + (nf_idx)k * " + std::to_string(s.tr) + ";");
  w.open("if (" + guard(s, live) + ")");
}

void HeldRows::header(const ReduceKernel& k, SourceWriter& w) const {
  block_header(k, w,
               "A thread holds its " + std::to_string(k.spec().per) + " group(s) of " +
                   std::to_string(k.spec().vec) + " element(s)\n// in registers across passes.\n");
}

std::string HeldRows::first_group(const ReduceKernel&) const {
  return "";
}

std::string HeldRows::load(const ReduceKernel& k, int j) const {
  const ReduceModel& m = k.model();
  const std::string J = std::to_string(j);
  if (k.spec().pairs) return "v_in" + J + "[k] = " + m.pair_word(j, "r") + ";";
  if (k.spec().vec == 1) return "v_in" + J + "[k].v[0] = " + m.element(j, "r") + ";";
  const std::string vt = m.vec_type(k.spec().reads[j].dtype);
  return "v_in" + J + "[k] = *(const " + vt + "*)(" + m.group_at(j, "g") + ");";
}

void HeldRows::before_loads(const ReduceKernel&, SourceWriter&) const {}
void HeldRows::after_loads(const ReduceKernel&, SourceWriter&) const {}

// Every element the thread reads, into registers, before any is used.
void HeldRows::loads(const ReduceKernel& k, SourceWriter& w) const {
  const ReduceSpec& s = k.spec();
  const std::string P = std::to_string(s.per);
  w.line("// the thread's elements, held in registers");
  std::vector<std::string> loads;
  for (std::size_t j = 0; j < s.reads.size(); ++j) {
    if (s.reads[j].along == Along::none) continue;
    const std::string held = s.pairs ? "unsigned int" : k.model().vec_type(s.reads[j].dtype);
    w.line(held + " v_in" + std::to_string(j) + "[" + P + "] = {};");
    loads.push_back(load(k, int(j)));
  }
  if (!loads.empty()) {
    if (s.covered) w.line("nf_idx c_lane[" + P + "] = {}, c_first[" + P + "] = {};");
    before_loads(k, w);
    open_groups(k, w, "live");
    if (s.vec == 1) k.model().group_element(w, true);
    if (s.covered) {
      k.model().covered_group(w);
      // A run that starts late in its first vector ends a vector sooner.
      w.open("if (c_lane[k] < " + k.model().run_length() + ")");
    }
    for (const std::string& l : loads) w.line(l);
    if (s.covered) w.close();
    w.close();
    w.close();
    after_loads(k, w);
  }
  k.held_ends(w);
  k.model().kept_declarations(w);
}

// A pass over the thread's held groups, from registers.
void HeldRows::element_loop(const ReduceKernel& k, SourceWriter& w, const ElementPass& pass) const {
  // Rows of vectors hold whole vectors (n % vec == 0): a group is in the
  // row or not (a shifted row's ends come after, ReduceKernel::row_ends).
  open_groups(k, w, "live");
  const std::string e = k.model().in_group();
  const std::string element = k.spec().pairs ? "[k]" : "[k].v[" + e + "]";
  k.element_body(
      w, pass, [&](int j) { return "v_in" + std::to_string(j) + element; }, pass.stores);
  w.close();
  w.close();
}

const ReduceWalk& held_rows_walk() {
  static const HeldRows walk;
  return walk;
}

}  // namespace nf::jit
