// The driver: each kernel of a reduction step from the model
// (reduce_model.hpp) and the walk its spec chose (reduce_walk.hpp). The
// parts every walk shares are ReduceKernel's (reduce_kernel.hpp), which asks
// the walk for its own at each.
#include "codegen/reduce_codegen.hpp"

#include "codegen/expressions.hpp"
#include "codegen/monoids.hpp"
#include "codegen/reduce_kernel.hpp"
#include "codegen/reduce_lanes.hpp"
#include "codegen/source_writer.hpp"
#include "compile/runtime_source.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

ReduceKernel::ReduceKernel(const ReduceModel& model, int stage)
    : m_(model),
      walk_(*model.spec().walk),
      lanes_(lanes_of(model.spec())),
      stage_(stage),
      kernels_(stage > 0 ? walk_.stages(model) : 1) {
  if (model.spec().pairs) {
    for (Term t : m_.terms()) {
      t.name += "_next";
      twins_.push_back(std::move(t));
    }
  }
  signature_ = m_.signature();
  if (stage_ > 0) signature_ += ";stage" + std::to_string(stage_) + "/" + std::to_string(kernels_);
  name_ = kernel_name("reduce", signature_);
}

GeneratedKernel ReduceKernel::run(bool with_source) const {
  GeneratedKernel k;
  k.signature = signature_;
  k.name = name_;
  walk_.launch(*this, k);
  KernelParams params;
  const std::string text = this->text(params);
  k.params = std::move(params.params);
  k.extents = std::move(params.extents);
  if (with_source) k.source = std::string(runtime_prelude()) + "\n" + text;
  return k;
}

std::string ReduceKernel::text(KernelParams& params) const {
  const ReduceSpec& s = spec();
  SourceWriter w;
  w.raw("// numfuse reduction kernel " + name_ + "\n// signature: " + signature_ + "\n");
  walk_.header(*this, w);
  if (s.pairs) {
    w.raw(
        "// Columns of 2-byte elements whose neighbours lie together: a thread takes\n"
        "// two outputs, o and o + 1, and reads the 4-byte word that holds both\n"
        "// elements; o + 1's accumulators (_next) go by o's names in its scopes.\n");
  }
  if (s.covered) {
    w.raw("// Rows lie over " + std::to_string(s.reduced.size()) +
          " reduced dims; runs of the innermost start anywhere in a\n"
          "// vector, so each run is read as the aligned vectors of " +
          std::to_string(s.vec) +
          " elements that\n// cover it (cov), lanes outside the run left out.\n");
  } else if (!s.columns && s.reduced.size() == 1 && s.vec > 1 && group_bytes(s) < 16) {
    // Why one run is read in vectors narrower than 16 bytes (reduce_lanes).
    w.raw("// Rows start on a boundary of " + std::to_string(s.vec) + " elements (" +
          std::to_string(group_bytes(s)) +
          " bytes) but not on a 16-byte vector,\n"
          "// and are not shifted (too short, or their operands start at different\n"
          "// places in a vector): they are read in vectors of " +
          std::to_string(s.vec) + " elements.\n");
  } else if (!s.columns && s.reduced.size() > 1) {
    // Why rows over several reduced dims read as they do (reduce_lanes).
    const std::string dims = std::to_string(s.reduced.size());
    w.raw(s.vec > 1 ? "// Rows lie over " + dims +
                          " reduced dims; every run of the innermost starts on a\n"
                          "// vector, so the rows are read in vectors of " +
                          std::to_string(s.vec) + " elements.\n"
          : s.run_lanes
              ? "// Rows lie over " + dims +
                    " reduced dims, read an element at a time; their runs\n"
                    "// along the innermost are short, so a thread keeps one place along\n"
                    "// them (lane_d) and reads it in every runs_step-th run from lane_q:\n"
                    "// no address takes a division, and a warp reads whole runs.\n"
              : "// Rows lie over " + dims +
                    " reduced dims, read an element at a time (each\n"
                    "// element's address takes its coordinates); a thread aims for " +
                    std::to_string(groups_in_flight(s)) + " in flight.\n");
  }
  if (s.shifted) {
    w.raw(
        "// Rows do not start on a vector boundary: a row's groups are the whole\n"
        "// aligned vectors in it, from `head` elements in; the `ends` elements\n"
        "// before and after them are taken one at a time.\n");
  }
  w.raw("typedef " + m_.idx() + " nf_idx;\n\n");
  m_.parameters_before(params);
  walk_.parameters(*this, params);
  m_.parameters_after(params);
  w.open("extern \"C\" __global__ void " + walk_.attributes(*this) + name_ + "(\n" + params.text +
         ")");
  w.line("nf_wait_for_earlier_kernels();");
  // Two buffers of a slot for each partial result that meets the others,
  // and whatever slots the walk needs besides.
  w.line("__shared__ __align__(16) unsigned char nf_smem[" +
         std::to_string(walk_.slots(*this) * slot_bytes()) + "];");
  walk_.shared(*this, w);
  w.line(lanes_.thread(s));
  const std::string V = std::to_string(s.vec);
  if (s.shifted) {
    w.line("const nf_idx groups = (n - " + std::to_string(s.vec - 1) + ") / " + V +
           ";  // whole in every row, wherever it starts");
    w.line("const nf_idx ends = n - groups * " + V + ";  // elements of a row outside them");
  } else if (s.covered) {
    const std::string last = std::to_string(s.reduced.size() - 1);
    w.line("const nf_idx groups = n / " + m_.run_length() + " * cov.d[" + last +
           "];  // the vectors covering every run");
  } else if (s.run_lanes) {
    m_.run_lanes(w);
  } else {
    w.line(s.vec > 1 ? "const nf_idx groups = n / " + V + ";" : "const nf_idx groups = n;");
  }
  walk_.block(*this, w);
  w.close();
  return w.text();
}

void ReduceKernel::outputs(SourceWriter& w) const {
  walk_.prologue(*this, w);
  m_.output_bases(w);
  m_.row_shift(w);
  m_.per_output_reads(w);
  m_.per_output_values(w, 0);
  walk_.loads(*this, w);
  walk_.passes(*this, w);
}

void ReduceKernel::pass(SourceWriter& w, int round, bool whole) const {
  w.line("// pass " + std::to_string(round));
  m_.first_elements(w, round);
  ElementPass pass{round, m_.element_closure(round), "", false, {}, ""};
  for (const Term& t : m_.terms()) {
    if (t.round != round) continue;
    w.line(m_.acc_type(t) + " " + t.name + " = " + m_.identity(t) + ";");
    if (const Term* next = twin(t)) {
      w.line(m_.acc_type(t) + " " + next->name + " = " + m_.identity(t) + ";");
    }
    pass.body += m_.accumulate(t) + "\n";
  }
  walk_.element_loop(*this, w, pass);
  row_ends(w, pass);
  combine(w, round, whole);
}

// The threads sharing an output combine their accumulators of `round`;
// `whole`: into the whole output's, whose mean may be needed. Two terms
// whose accumulators fit one slot meet together, as a pair: one exchange,
// one wait at each barrier, where they would take two.
// The meetings of a kernel take turns between two shared buffers
// (see nf_row_allreduce): the k-th uses buffer k % 2.
void ReduceKernel::combine(SourceWriter& w, int round, bool whole) const {
  int call = 0;
  for (int r = 1; r < round; ++r) call += int(meetings(r).size());
  for (const std::vector<const Term*>& meeting : meetings(round)) {
    const std::string buffer =
        call++ % 2 ? "nf_smem + " + std::to_string(buffer_bytes()) : "nf_smem";
    if (meeting.size() == 1) {
      walk_.meet(*this, w, meeting[0]->name, m_.combine_op(*meeting[0]), buffer);
    } else {
      const Term &a = *meeting[0], &b = *meeting[1];
      const std::string q = std::string("q") + a.name.substr(1);
      w.line("nf_pair<" + m_.acc_type(a) + ", " + m_.acc_type(b) + "> " + q + " = {" + a.name +
             ", " + b.name + "};");
      walk_.meet(*this, w, q,
                 "nf_pair_op<" + monoid_name(a.kind) + ", " + monoid_name(b.kind) + ">()", buffer);
      w.line(a.name + " = " + q + ".a;");
      w.line(b.name + " = " + q + ".b;");
    }
    for (const Term* t : meeting) {
      // The mean a second pass centres on (Centre::mean).
      if (whole && t->mean_used) {
        const std::string a = m_.ctype(t->input);
        w.line("const " + a + " m" + t->name.substr(1) + " = " + t->name + " / (" + a + ")n;");
      }
    }
  }
}

std::vector<std::vector<const Term*>> ReduceKernel::meetings(int round) const {
  std::vector<std::vector<const Term*>> out;
  const auto meet = [&](const Term& t) {
    if (!out.empty() && out.back().size() == 1 &&
        m_.acc_bytes(*out.back()[0]) + m_.acc_bytes(t) <= std::size_t(slot_bytes())) {
      out.back().push_back(&t);
    } else {
      out.push_back({&t});
    }
  };
  for (const Term& t : m_.terms()) {
    if (t.round != round) continue;
    meet(t);
    if (const Term* next = twin(t)) meet(*next);
  }
  return out;
}

const Term* ReduceKernel::twin(const Term& t) const {
  if (twins_.empty()) return nullptr;
  return &twins_[std::size_t(&t - m_.terms().data())];
}

std::string ReduceKernel::twin_base(int j) const {
  return m_.base(j) + " + kst_" + m_.operand_name(j) + ".d[" +
         std::to_string(spec().kept.size() - 1) + "]";
}

std::vector<std::string> ReduceKernel::output_rows(
    const std::function<std::string(int)>& base) const {
  const ReduceSpec& s = spec();
  const Step& step = m_.step();
  std::vector<std::string> rows;
  for (std::size_t o = 0; o < step.writes.size(); ++o) {
    if (s.writes[o].along != Along::none) continue;
    const int j = int(s.reads.size() + o);
    rows.push_back("out" + std::to_string(o) + "[" + base(j) +
                   "] = " + store_expr(s.writes[o].dtype, m_.name(step.writes[o])) + ";");
  }
  return rows;
}

// The last pass: element outputs, then per-output ones.
void ReduceKernel::stores(SourceWriter& w) const {
  const ReduceSpec& s = spec();
  const Step& step = m_.step();
  ElementPass pass{m_.rounds() + 1, {}, "", true, {}, ""};
  for (std::size_t o = 0; o < step.writes.size(); ++o) {
    if (s.writes[o].along == Along::none) continue;
    const int j = int(s.reads.size() + o);
    const std::string value = store_expr(s.writes[o].dtype, m_.name(step.writes[o]));
    const std::string store = m_.element(j, "r") + " = " + value + ";\n";
    pass.element_stores += store;
    if (s.vec > 1) {
      pass.vector_writes.push_back(int(o));
      pass.body += "w_out" + std::to_string(o) + ".v[e] = " + value + ";\n";
    } else {
      pass.body += store;
    }
  }
  if (!pass.body.empty()) {
    pass.values = m_.element_closure(pass.stage);
    w.line("// outputs per element");
    walk_.element_loop(*this, w, pass);
    row_ends(w, pass);
  }
  const std::vector<std::string> rows = output_rows([&](int j) { return m_.base(j); });
  if (rows.empty()) return;
  const std::string guard = "if (" + walk_.store_guard(*this) + " && tr == 0)";
  w.line("// outputs per output element");
  w.open(guard);
  for (const std::string& row : rows) w.line(row);
  w.close();
  if (!s.pairs) return;
  // The values per output from the twins' results (pairs write no
  // elements), in a scope where they go by the first output's names.
  w.open("", "the pair's second output, o + 1");
  for (const Term& t : m_.terms()) {
    w.line("const " + m_.acc_type(t) + " " + t.name + " = " + twin(t)->name + ";");
  }
  for (int round = 1; round <= m_.rounds(); ++round) m_.per_output_values(w, round);
  w.open(guard);
  for (const std::string& row : output_rows([&](int j) { return twin_base(j); })) w.line(row);
  w.close();
  w.close();
}

void ReduceKernel::element_body(SourceWriter& w, const ElementPass& pass,
                                const std::function<std::string(int)>& read_at,
                                bool addressed) const {
  const ReduceSpec& s = spec();
  if (s.pairs) {
    pair_bodies(w, pass, read_at, addressed);
    return;
  }
  const std::string V = std::to_string(s.vec);
  for (int o : pass.vector_writes) {
    w.line(m_.vec_type(s.writes[o].dtype) + " w_out" + std::to_string(o) + ";");
  }
  if (s.covered) {
    w.line("#pragma unroll");
    w.open("for (int e = 0; e < " + V + "; ++e)");
    w.line("const nf_idx r = c_first[k] + e;");
    w.line("// lanes outside the run take no part");
    w.open("if (nf_within(c_lane[k] + e, " + m_.run_length() + "))");
  } else if (s.vec > 1) {
    w.line("#pragma unroll");
    w.open("for (int e = 0; e < " + V + "; ++e)");
    w.line("const nf_idx r = " + std::string(s.shifted ? "head + " : "") + "g * " + V + " + e;");
  } else {
    m_.group_element(w, addressed);
  }
  // Elements read one at a time have their coordinates from group_element.
  const bool coordinates = addressed && (s.covered || s.vec > 1);
  m_.element_values(w, pass.values, pass.stage, read_at, coordinates);
  w.lines(pass.body);
  if (s.covered) w.close();
  if (s.vec > 1) w.close();
  for (int o : pass.vector_writes) {
    const int j = int(s.reads.size()) + o;
    w.line("nf_store_vector((" + m_.vec_type(s.writes[o].dtype) + "*)(" + m_.group_at(j, "g") +
           "), w_out" + std::to_string(o) + ");");
  }
}

void ReduceKernel::pair_bodies(SourceWriter& w, const ElementPass& pass,
                               const std::function<std::string(int)>& read_at,
                               bool addressed) const {
  w.line("const nf_idx r = g;");
  if (addressed) m_.reduced_coordinates(w);
  for (int i : pass.values.computed) {
    if (!m_.is_read(i)) continue;
    const std::string J = std::to_string(m_.read_index(i));
    w.line("const unsigned int w_in" + J + " = " + read_at(m_.read_index(i)) + ";");
  }
  for (int second = 0; second < 2; ++second) {
    w.open("", second ? "output o + 1" : "output o");
    for (const Term& t : m_.terms()) {
      if (second && t.round == pass.stage) w.line("auto& " + t.name + " = " + twin(t)->name + ";");
    }
    m_.element_values(
        w, pass.values, pass.stage,
        [&](int j) {
          return "nf_pair_element(w_in" + std::to_string(j) + ", " + std::to_string(second) + ")";
        },
        false);
    w.lines(pass.body);
    w.close();
  }
}

bool ReduceKernel::holds_ends() const {
  const ReduceSpec& s = spec();
  return s.shifted && s.per > 0 && s.tr >= 2 * s.vec - 2;
}

// Where a thread of the block that takes a shifted row's ends (store_guard)
// holds one of them: loaded with its groups, so that no pass waits for it.
void ReduceKernel::held_ends(SourceWriter& w) const {
  if (!holds_ends()) return;
  const ReduceSpec& s = spec();
  w.line("// the row's ends, an element a thread, loaded with its groups");
  w.line("const bool end = " + walk_.store_guard(*this) + " && tr < ends;");
  w.line("const nf_idx r_end = tr < head ? (nf_idx)tr : tr + groups * " + std::to_string(s.vec) +
         ";");
  for (int j : varying_reads(s)) {
    const std::string T = storage_ctype(s.reads[j].dtype);
    w.line(T + " x_in" + std::to_string(j) + " = end ? " + m_.element(j, "r_end") + " : (" + T +
           ")0;");
  }
}

// A shifted row's elements outside its whole groups, an element a thread
// of the block that takes them (store_guard): held (held_ends), or read
// from memory in each pass. Fewer than two groups' worth.
void ReduceKernel::row_ends(SourceWriter& w, const ElementPass& pass) const {
  if (!spec().shifted) return;
  const std::string TR = std::to_string(spec().tr);
  const bool held = holds_ends();
  w.line("// the row's elements before its first whole group and after its last");
  if (held) {
    w.open("if (end)");
    w.line("const nf_idx r = r_end;");
  } else {
    w.open("if (" + walk_.store_guard(*this) + ")");
    w.open("for (nf_idx i = tr; i < ends; i += " + TR + ")");
    w.line("const nf_idx r = i < head ? i : i + groups * " + std::to_string(spec().vec) + ";");
  }
  m_.element_values(
      w, m_.loose_closure(pass.stage), 0,
      [&](int j) { return held ? "x_in" + std::to_string(j) : m_.element(j, "r"); }, false);
  w.lines(pass.stores ? pass.element_stores : pass.body);
  if (!held) w.close();
  w.close();
}

namespace {

std::vector<GeneratedKernel> kernels(const ReduceSpec& spec, bool with_source) {
  if (!spec.walk) throw InternalError("codegen: a reduction spec without a walk");
  const ReduceModel model(spec);
  const int stages = spec.walk->stages(model);
  if (stages == 0) return {ReduceKernel(model, 0).run(with_source)};
  std::vector<GeneratedKernel> out;
  for (int stage = 1; stage <= stages; ++stage) {
    out.push_back(ReduceKernel(model, stage).run(with_source));
  }
  return out;
}

}  // namespace

std::vector<GeneratedKernel> describe_reduce(const ReduceSpec& spec) {
  return kernels(spec, false);
}
std::vector<GeneratedKernel> generate_reduce(const ReduceSpec& spec) {
  return kernels(spec, true);
}

}  // namespace nf::jit
