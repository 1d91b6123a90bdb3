// The driver: each kernel of a reduction step from the model
// (reduce_model.hpp) and the walk its spec chose (reduce_walk.hpp). The
// parts every walk shares are ReduceKernel's (reduce_kernel.hpp), which asks
// the walk for its own at each.
#include "codegen/reduce_codegen.hpp"

#include "codegen/expressions.hpp"
#include "codegen/monoids.hpp"
#include "codegen/reduce_kernel.hpp"
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
  w.line(s.vec > 1 ? "const nf_idx groups = n / " + std::to_string(s.vec) + ";"
                   : "const nf_idx groups = n;");
  walk_.block(*this, w);
  w.close();
  return w.text();
}

void ReduceKernel::outputs(SourceWriter& w) const {
  walk_.prologue(*this, w);
  m_.output_bases(w);
  m_.per_output_reads(w);
  m_.per_output_values(w, 0);
  walk_.loads(*this, w);
  walk_.passes(*this, w);
}

void ReduceKernel::pass(SourceWriter& w, int round, bool whole) const {
  w.line("// pass " + std::to_string(round));
  m_.first_elements(w, round);
  ElementPass pass{round, m_.element_closure(round), "", false, {}};
  for (const Term& t : m_.terms()) {
    if (t.round != round) continue;
    w.line(m_.acc_type(t) + " " + t.name + " = " + m_.identity(t) + ";");
    pass.body += m_.accumulate(t) + "\n";
  }
  walk_.element_loop(*this, w, pass);
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
  for (const Term& t : m_.terms()) {
    if (t.round != round) continue;
    if (!out.empty() && out.back().size() == 1 &&
        m_.acc_bytes(*out.back()[0]) + m_.acc_bytes(t) <= std::size_t(slot_bytes())) {
      out.back().push_back(&t);
    } else {
      out.push_back({&t});
    }
  }
  return out;
}

// The last pass: element outputs, then per-output ones.
void ReduceKernel::stores(SourceWriter& w) const {
  const ReduceSpec& s = spec();
  const Step& step = m_.step();
  ElementPass pass{m_.rounds() + 1, {}, "", true, {}};
  for (std::size_t o = 0; o < step.writes.size(); ++o) {
    if (s.writes[o].along == Along::none) continue;
    const int j = int(s.reads.size() + o);
    const std::string value = store_expr(s.writes[o].dtype, m_.name(step.writes[o]));
    if (s.vec > 1) {
      pass.vector_writes.push_back(int(o));
      pass.body += "w_out" + std::to_string(o) + ".v[e] = " + value + ";\n";
    } else {
      pass.body += m_.element(j, "r") + " = " + value + ";\n";
    }
  }
  if (!pass.body.empty()) {
    pass.values = m_.element_closure(pass.stage);
    w.line("// outputs per element");
    walk_.element_loop(*this, w, pass);
  }
  std::vector<std::string> rows;
  for (std::size_t o = 0; o < step.writes.size(); ++o) {
    if (s.writes[o].along != Along::none) continue;
    const int j = int(s.reads.size() + o);
    rows.push_back("out" + std::to_string(o) + "[" + m_.base(j) +
                   "] = " + store_expr(s.writes[o].dtype, m_.name(step.writes[o])) + ";");
  }
  if (rows.empty()) return;
  w.line("// outputs per output element");
  w.open("if (" + walk_.store_guard(*this) + " && tr == 0)");
  for (const std::string& row : rows) w.line(row);
  w.close();
}

void ReduceKernel::element_body(SourceWriter& w, const ElementPass& pass,
                                const std::function<std::string(int)>& read_at,
                                bool addressed) const {
  const ReduceSpec& s = spec();
  const std::string V = std::to_string(s.vec);
  for (int o : pass.vector_writes) {
    w.line(m_.vec_type(s.writes[o].dtype) + " w_out" + std::to_string(o) + ";");
  }
  if (s.vec > 1) {
    w.line("#pragma unroll");
    w.open("for (int e = 0; e < " + V + "; ++e)");
    w.line("const nf_idx r = g * " + V + " + e;");
  } else {
    w.line("const nf_idx r = g;");
  }
  m_.element_values(w, pass.values, pass.stage, read_at, addressed);
  w.lines(pass.body);
  if (s.vec > 1) w.close();
  for (int o : pass.vector_writes) {
    const int j = int(s.reads.size()) + o;
    w.line("*(" + m_.vec_type(s.writes[o].dtype) + "*)(out" + std::to_string(o) + " + " +
           m_.base(j) + " + g * " + V + ") = w_out" + std::to_string(o) + ";");
  }
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
