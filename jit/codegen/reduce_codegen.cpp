#include "codegen/reduce_codegen.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "codegen/expressions.hpp"
#include "codegen/monoids.hpp"
#include "compile/runtime_source.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {
namespace {

const char* along_name(Along a) {
  switch (a) {
    case Along::none:
      return "none";
    case Along::unit:
      return "unit";
    case Along::strided:
      return "strided";
    default:
      return "general";
  }
}

// A term a kernel accumulates: a monoid (TermKind, jit/runtime/nf_reduce.h)
// over the elements of one value, in one pass; two reductions of the same
// values share terms (mean and var of the same rows: one sum).
struct Term {
  TermKind kind;
  int input;               // the node whose elements it accumulates
  int round;               // the pass that accumulates it, from 1
  std::string centre;      // deviations: the per-output value they are taken from
  std::string name;        // its accumulator
  bool mean_used = false;  // whether the mean of this sum is a centre
};

constexpr int kKeptWords = 32;  // registers a thread holds computed values in, at most

class Generator {
 public:
  // `stage`: which kernel of a split step, from 1 (pass 1) to the number of
  // passes + 1 (the stores); 0 for the one kernel of a step not split.
  Generator(const ReduceSpec& spec, int stage)
      : s_(spec), p_(*spec.program), step_(*spec.step), stage_(stage) {
    name_values();
    classify();
    plan_terms();
    plan_registers();
  }

  int kernels() const { return split() ? rounds_ + 1 : 1; }

  GeneratedKernel run(bool with_source) {
    k_.signature = signature();
    if (split())
      k_.signature += ";stage" + std::to_string(stage_) + "/" + std::to_string(kernels());
    k_.name = kernel_name("reduce", k_.signature);
    k_.threads = s_.tr * s_.to;
    k_.cluster = s_.cluster;
    k_.blocks = (numel(s_.kept) + s_.to - 1) / s_.to * s_.chunks * s_.cluster;
    k_.loops_over_tiles = s_.prefetch;
    k_.shared_bytes = s_.prefetch ? std::size_t(prefetch_bytes(s_)) : 0;
    if (split()) {
      for (const Term& t : terms_) {
        k_.workspace_bytes.push_back(acc_bytes(t) * numel(s_.kept) * s_.chunks);
      }
    }
    const std::string text = kernel_text();  // also lists the parameters
    if (with_source) k_.source = std::string(runtime_prelude()) + "\n" + text;
    return std::move(k_);
  }

 private:
  const Node& node(int i) const { return *p_.nodes[i]; }
  const ProgramInputs& inputs(int i) const { return p_.inputs[i]; }
  bool split() const { return stage_ > 0; }
  bool clustered() const { return s_.cluster > 1; }
  bool is_read(int i) const { return reads_.count(i) != 0; }
  const ReduceOperand& read_of(int i) const { return s_.reads[reads_.at(i)]; }

  // Canonical names, as in fused kernels: aJ for the J-th array read, tK for
  // computed values, sM for scalar parameters, pK for accumulators.
  void name_values() {
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      reads_[step_.reads[j]] = int(j);
      names_[step_.reads[j]] = "a" + std::to_string(j);
    }
    int t = 0;
    for (int i : step_.nodes) {
      if (is_read(i)) continue;
      names_[i] = "t" + std::to_string(t++);
      const OpKind k = op_kind(node(i).op);
      if (k == OpKind::constant) scalars_[i] = "s" + std::to_string(scalars_.size());
      if (k == OpKind::random || k == OpKind::iota) {
        throw InternalError("codegen: a generator in a reduction kernel");
      }
    }
  }

  // A value is per output (a row value) when it does not vary along the
  // reduced dims: reads that do not, constants, reductions, and what is
  // computed from those alone. The rest is per element.
  void classify() {
    for (int i : step_.reads) per_output_[i] = read_of(i).along == Along::none;
    for (int i : step_.nodes) {
      if (is_read(i)) continue;
      const OpKind k = op_kind(node(i).op);
      bool row = k == OpKind::constant || k == OpKind::reduction;
      if (!row) {
        row = std::all_of(inputs(i).begin(), inputs(i).end(),
                          [&](int j) { return per_output_.at(j); });
      }
      per_output_[i] = row;
    }
  }

  int term(TermKind kind, int input, int round, const std::string& centre = "") {
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      const Term& x = terms_[t];
      if (x.kind == kind && x.input == input && x.round == round && x.centre == centre) {
        return int(t);
      }
    }
    terms_.push_back({kind, input, round, centre, "p" + std::to_string(terms_.size())});
    return int(terms_.size() - 1);
  }

  // Which pass accumulates each reduction's terms (ops.def's passes): the
  // first after every reduction its input depends on, and the next for a
  // second term, centred on the first's result.
  void plan_terms() {
    for (int i : step_.reads) ready_[i] = 0;
    for (int i : step_.nodes) {
      if (is_read(i)) continue;
      const Node& n = node(i);
      int ready = 0;
      for (int j : inputs(i)) ready = std::max(ready, ready_.at(j));
      if (op_kind(n.op) != OpKind::reduction) {
        ready_[i] = ready;
        continue;
      }
      const int x = inputs(i)[0];
      int round = ready, previous = -1;
      for (TermKind kind : reduction_passes(n.op)) {
        std::string centre;
        if (previous >= 0 && term_centre(kind) == Centre::mean) {
          terms_[previous].mean_used = true;
          centre = "m" + terms_[previous].name.substr(1);
        } else if (previous >= 0 && term_centre(kind) == Centre::value) {
          centre = terms_[previous].name;
        }
        previous = term(kind, x, ++round, centre);
        result_[i].push_back(previous);
      }
      ready_[i] = round;
      rounds_ = std::max(rounds_, round);
    }
  }

  std::string signature() const {
    std::string sig = std::string("reduce;idx") + (s_.index64 ? "64" : "32") +
                      (s_.columns ? ";columns" : ";rows") + ";tr" + std::to_string(s_.tr) + ";to" +
                      std::to_string(s_.to) + ";per" + std::to_string(s_.per) + ";vec" +
                      std::to_string(s_.vec) + ";kept" + std::to_string(s_.kept.size()) + ";red" +
                      std::to_string(s_.reduced.size()) +
                      (clustered() ? ";cluster" + std::to_string(s_.cluster) : "") +
                      (s_.prefetch ? ";prefetch" : "") + (s_.whole ? ";whole" : "") + ";in";
    for (const auto& o : s_.reads)
      sig += std::string(":") + std::string(name(o.dtype)) + "/" + along_name(o.along);
    sig += ";out";
    for (const auto& o : s_.writes)
      sig += std::string(":") + std::string(name(o.dtype)) + "/" + along_name(o.along);
    for (int i : step_.nodes) {
      if (is_read(i)) continue;
      const Node& n = node(i);
      sig +=
          ";" + names_.at(i) + "=" + std::string(op_name(n.op)) + "." + std::string(name(n.dtype));
      for (int in : inputs(i)) sig += "," + names_.at(in);
      sig += code_attributes(n);
    }
    sig += ";write";
    for (int w : step_.writes) sig += ":" + names_.at(w);
    return sig;
  }

  std::string ctype(int i) const { return compute_ctype(node(i).dtype); }
  std::string idx() const { return s_.index64 ? "long long" : "int"; }
  std::string vec_type(DType t) const {
    return "nf_vec<" + std::string(storage_ctype(t)) + ", " + std::to_string(s_.vec) + ">";
  }

  // Operand j of the kernel: reads first, then writes.
  const ReduceOperand& operand(int j) const {
    return j < int(s_.reads.size()) ? s_.reads[j] : s_.writes[j - s_.reads.size()];
  }
  std::string operand_name(int j) const {
    const int reads = int(s_.reads.size());
    return j < reads ? "in" + std::to_string(j) : "out" + std::to_string(j - reads);
  }
  // Offset of operand j's element at the output's start, and within it at r.
  std::string base(int j) const { return s_.kept.empty() ? "0" : "b_" + operand_name(j); }
  std::string within(int j, const std::string& r) const {
    const ReduceOperand& o = operand(j);
    switch (o.along) {
      case Along::none:
        return "0";
      case Along::unit:
        return r;
      case Along::strided:
        return r + " * rst_" + operand_name(j);
      default: {
        std::string e;
        for (std::size_t d = 0; d < s_.reduced.size(); ++d) {
          e += (d ? " + " : "") + std::string("x") + std::to_string(d) + " * rst_" +
               operand_name(j) + ".d[" + std::to_string(d) + "]";
        }
        return "(" + e + ")";
      }
    }
  }
  std::string element(int j, const std::string& r) const {
    return operand_name(j) + "[" + base(j) + " + " + within(j, r) + "]";
  }
  bool any_general() const {
    for (int j = 0; j < int(s_.reads.size() + s_.writes.size()); ++j) {
      if (operand(j).along == Along::general) return true;
    }
    return false;
  }

  // What stage `stage` (passes 1 to rounds_, then the stores) works on at
  // each element: the values its accumulators or outputs take.
  std::vector<int> stage_targets(int stage) const {
    std::vector<int> targets;
    if (stage <= rounds_) {
      for (const Term& t : terms_) {
        if (t.round == stage) targets.push_back(t.input);
      }
      return targets;
    }
    for (std::size_t w = 0; w < step_.writes.size(); ++w) {
      if (s_.writes[w].along != Along::none) targets.push_back(step_.writes[w]);
    }
    return targets;
  }

  // The element values (not per output) a stage computes, reads included,
  // and those it takes from registers where an earlier pass left them; each
  // in program order.
  struct Closure {
    std::vector<int> computed;
    std::vector<int> from_registers;
  };
  Closure element_closure(int stage) const {
    Closure c;
    std::vector<int> stack = stage_targets(stage);
    std::set<int> seen;
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (per_output_.at(i) || !seen.insert(i).second) continue;
      const auto kept = kept_.find(i);
      if (kept != kept_.end() && kept->second < stage) {
        c.from_registers.push_back(i);
        continue;
      }
      c.computed.push_back(i);
      if (is_read(i)) continue;
      for (int j : inputs(i)) stack.push_back(j);
    }
    std::sort(c.computed.begin(), c.computed.end());
    std::sort(c.from_registers.begin(), c.from_registers.end());
    return c;
  }

  // In held rows, a value that one pass computes and a later one needs again
  // stays in registers (softmax's exp(x - max)): the later pass takes it
  // rather than what it was computed from, which the compiler then lets go.
  // At most kKeptWords registers a thread, so that holding stays cheap.
  void plan_registers() {
    if (s_.per == 0) return;
    std::map<int, int> first;  // the stage that first computes each value
    for (int stage = 1; stage <= rounds_ + 1; ++stage) {
      for (int i : element_closure(stage).computed) first.emplace(i, stage);
    }
    int words = 0;
    for (int stage = 2; stage <= rounds_ + 1; ++stage) {
      std::vector<int> stack = stage_targets(stage);
      std::set<int> seen;
      while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        if (per_output_.at(i) || !seen.insert(i).second || kept_.count(i)) continue;
        if (is_read(i)) continue;
        // A library function's value is worth a register more than
        // computing it again.
        if (first.at(i) < stage && is_library_function(node(i))) {
          const DType t = node(i).dtype;
          const int w = s_.per * s_.vec * (t == f64 || t == i64 ? 2 : 1);
          if (words + w <= kKeptWords) {
            kept_[i] = first.at(i);
            words += w;
            continue;
          }
        }
        for (int j : inputs(i)) stack.push_back(j);
      }
    }
  }

  // The coordinates x0, x1, ... of reduced index r, where an operand needs them.
  std::string reduced_coordinates(const std::string& ind) const {
    if (!any_general()) return "";
    std::string b = ind + "nf_idx q = r;\n";
    for (int d = int(s_.reduced.size()) - 1; d > 0; --d) {
      const std::string D = std::to_string(d);
      b += ind + "const nf_idx x" + D + " = q % red.d[" + D + "];\n";
      b += ind + "q /= red.d[" + D + "];\n";
    }
    return b + ind + "const nf_idx x0 = q;\n";
  }

  // Statements computing `values` (a stage's closure) at element r. Held
  // reads come from registers; `addressed`: some operand is addressed at r.
  std::string element_values(const Closure& values, int stage, const std::string& ind, bool held,
                             bool addressed) const {
    std::string b = addressed ? reduced_coordinates(ind) : "";
    const std::string e = s_.vec > 1 ? "e" : "0";
    for (int i : values.computed) {
      if (!is_read(i)) continue;
      const int j = reads_.at(i);
      const std::string J = std::to_string(j);
      const std::string ref = held         ? "v_in" + J + "[k].v[" + e + "]"
                              : s_.vec > 1 ? "w_in" + J + ".v[e]"
                                           : element(j, "r");
      b += ind + "const " + ctype(i) + " a" + J + " = " + load_expr(s_.reads[j].dtype, ref) + ";\n";
    }
    for (int i : values.from_registers) {
      b += ind + "const " + ctype(i) + " " + names_.at(i) + " = " + kept_name(i) + "[k][" + e +
           "];\n";
    }
    for (int i : values.computed) {
      if (is_read(i)) continue;
      b += ind + "const " + ctype(i) + " " + names_.at(i) + " = " + expr(i) + ";\n";
      const auto kept = kept_.find(i);
      if (kept != kept_.end() && kept->second == stage) {
        b += ind + kept_name(i) + "[k][" + e + "] = " + names_.at(i) + ";\n";
      }
    }
    return b;
  }
  std::string kept_name(int i) const { return "c_" + names_.at(i); }
  // Where a held thread's groups start: its block's part of a cluster's row.
  std::string first_group() const { return clustered() ? "g0 + " : ""; }

  // A division of element values by a per-output value (softmax's
  // exp(x - max) / sum): the divisor's reciprocal is taken once per output
  // (nf_divisor_of), and nf_divide_by corrects each product to the quotient.
  bool divides_by_output(int i) const {
    return node(i).op == OpId::divide && !per_output_.at(i) && per_output_.at(inputs(i)[1]);
  }

  std::string expr(int i) const {
    std::vector<std::string> in;
    for (int j : inputs(i)) in.push_back(names_.at(j));
    if (divides_by_output(i)) {
      return "nf_divide_by(" + in[0] + ", d_" + names_.at(i) + ")";
    }
    const auto param = scalars_.find(i);
    return node_expr(node(i), in, param == scalars_.end() ? "" : param->second, "");
  }

  // A pass over every element of the thread's outputs: `body` at element r.
  // Held rows come from registers; otherwise each pass reads memory again,
  // whole vectors at a time where rows are contiguous. `stores`: the body
  // writes elements (vector_writes: as whole vectors, after the group).
  std::string element_pass(int stage, const std::string& body, bool stores,
                           const std::vector<int>& vector_writes) const {
    const std::string V = std::to_string(s_.vec), TR = std::to_string(s_.tr);
    const bool held = s_.per > 0, vec = s_.vec > 1;
    const Closure values = element_closure(stage);
    std::string b, ind = "    ";
    if (held) {
      // Rows of vectors hold whole vectors (n % vec == 0): a group is in
      // the row or not.
      b += "#pragma unroll\n  for (int k = 0; k < " + std::to_string(s_.per) + "; ++k) {\n";
      b += "    const nf_idx g = " + first_group() + "tr + (nf_idx)k * " + TR + ";\n";
      b += "    if (" + held_guard("live") + ") {\n";
      ind += "  ";
    } else {
      b += split() ? "  for (nf_idx g = g0 + tr; live && g < g1; g += " + TR + ") {\n"
                   : "  for (nf_idx g = tr; live && g < groups; g += " + TR + ") {\n";
      for (int i : values.computed) {
        if (!vec || !is_read(i)) continue;
        const int j = reads_.at(i);
        const std::string vt = vec_type(s_.reads[j].dtype);
        b += ind + "const " + vt + " w_in" + std::to_string(j) + " = *(const " + vt + "*)(in" +
             std::to_string(j) + " + " + base(j) + " + g * " + V + ");\n";
      }
    }
    for (int w : vector_writes) {
      b += ind + vec_type(s_.writes[w].dtype) + " w_out" + std::to_string(w) + ";\n";
    }
    const std::string outer = ind;
    if (vec) {
      b += "#pragma unroll\n" + ind + "for (int e = 0; e < " + V + "; ++e) {\n";
      ind += "  ";
      b += ind + "const nf_idx r = g * " + V + " + e;\n";
    } else {
      b += ind + "const nf_idx r = g;\n";
    }
    b += element_values(values, stage, ind, held, !held || stores);
    for (std::size_t at = 0; at < body.size();) {
      const std::size_t end = body.find('\n', at);
      b += ind + body.substr(at, end - at) + "\n";
      at = end + 1;
    }
    if (vec) b += outer + "}\n";
    for (int w : vector_writes) {
      const int j = int(s_.reads.size()) + w;
      b += outer + "*(" + vec_type(s_.writes[w].dtype) + "*)(out" + std::to_string(w) + " + " +
           base(j) + " + g * " + V + ") = w_out" + std::to_string(w) + ";\n";
    }
    if (held) b += "    }\n";
    return b + "  }\n";
  }

  // A term's monoid (jit/runtime/nf_reduce.h), its accumulator type, its
  // identity and the statement that takes element r in.
  std::string monoid(const Term& t) const { return monoid_name(t.kind); }
  std::string acc_type(const Term& t) const { return monoid(t) + "::acc<" + ctype(t.input) + ">"; }
  std::string identity(const Term& t) const {
    return monoid(t) + "::identity<" + ctype(t.input) + ">()";
  }
  std::string accumulate(const Term& t) const {
    return t.name + " = " + monoid(t) + "::accumulate(" + t.name + ", " + names_.at(t.input) +
           ", r" + (t.centre.empty() ? "" : ", " + t.centre) + ");";
  }
  std::string combine_op(const Term& t) const { return monoid(t) + "()"; }

  // The result of reduction i from its terms (ops.def's finish).
  std::string finish(int i) const {
    const Node& n = node(i);
    std::string v = std::string(reduction_finish(n.op)) + "(";
    for (int t : result_.at(i)) v += terms_[t].name + ", ";
    return "nf_convert<" + ctype(i) + ">(" + v + "n, " + std::to_string(n.ddof) + "))";
  }

  // After pass `round`: the per-output values it makes available.
  std::string per_output_values(int round) const {
    std::string b;
    for (int i : step_.nodes) {
      if (is_read(i) || !per_output_.at(i) || ready_.at(i) != round) continue;
      const std::string v = op_kind(node(i).op) == OpKind::reduction ? finish(i) : expr(i);
      b += "  const " + ctype(i) + " " + names_.at(i) + " = " + v + ";\n";
    }
    for (int i : step_.nodes) {
      if (is_read(i) || !divides_by_output(i) || ready_.at(inputs(i)[1]) != round) continue;
      b += "  const nf_divisor<" + ctype(i) + "> d_" + names_.at(i) + " = nf_divisor_of<" +
           ctype(i) + ">(" + names_.at(inputs(i)[1]) + ");\n";
    }
    return b;
  }

  std::string pass(int round) const {
    std::string b = "  // pass " + std::to_string(round) + "\n";
    std::string body;
    for (const Term& t : terms_) {
      if (t.round != round) continue;
      b += "  " + acc_type(t) + " " + t.name + " = " + identity(t) + ";\n";
      body += accumulate(t) + "\n";
    }
    b += element_pass(round, body, false, {});
    return b + combine(round, !split());
  }

  // A split row's pass `round`, from the partial results its chunks wrote:
  // each thread combines some in chunk order, then the block combines those.
  std::string gather(int round) const {
    std::string b = "  // pass " + std::to_string(round) + ", from every chunk's partial result\n";
    for (const Term& t : terms_) {
      if (t.round != round) continue;
      const std::string K = t.name.substr(1);
      b += "  " + acc_type(t) + " " + t.name + " = " + identity(t) + ";\n";
      b += "  for (nf_idx j = tr; live && j < chunks; j += " + std::to_string(s_.tr) + ") " +
           t.name + " = " + combine_op(t) + "(" + t.name + ", ws" + K + "[o * chunks + j]);\n";
    }
    return b + combine(round, true);
  }

  // The threads sharing an output combine their accumulators of `round`;
  // `whole`: into the whole output's, whose mean may be needed.
  // The combinations of a kernel take turns between two shared buffers
  // (see nf_row_allreduce): the k-th uses buffer k % 2.
  std::string combine(int round, bool whole) const {
    std::string b;
    const int buffer_bytes = block_slots() * 16;
    int call = 0;
    for (const Term& t : terms_) call += t.round < round;
    for (const Term& t : terms_) {
      if (t.round != round) continue;
      const std::string buffer =
          call++ % 2 ? "nf_smem + " + std::to_string(buffer_bytes) : "nf_smem";
      b += "  " + t.name + " = " +
           (s_.columns
                ? "nf_column_allreduce<" + std::to_string(s_.to) + ", " + std::to_string(s_.tr)
                : "nf_row_allreduce<" + std::to_string(s_.tr)) +
           ">(" + t.name + ", " + combine_op(t) + ", " + buffer + ");\n";
      if (clustered()) {
        b += "  " + t.name + " = nf_cluster_allreduce<" + std::to_string(s_.cluster) + ">(" +
             t.name + ", " + combine_op(t) + ", nf_smem + " + std::to_string(2 * buffer_bytes) +
             ");\n";
      }
      if (whole && t.mean_used) {
        const std::string a = ctype(t.input);
        b += "  const " + a + " m" + t.name.substr(1) + " = " + t.name + " / (" + a + ")n;\n";
      }
    }
    return b;
  }

  // A split row's pass `round` ends with each chunk's partial result.
  std::string write_partials(int round) const {
    std::string b;
    for (const Term& t : terms_) {
      if (t.round != round) continue;
      b += "  if (live && tr == 0) ws" + t.name.substr(1) + "[o * chunks + c] = " + t.name + ";\n";
    }
    return b;
  }

  std::size_t acc_bytes(const Term& t) const {
    return accumulator_bytes(t.kind, node(t.input).dtype);
  }

  // The last pass: element outputs, then per-output ones.
  std::string store_pass() const {
    std::string b;
    std::vector<int> vector_writes;
    std::string body;
    for (std::size_t w = 0; w < step_.writes.size(); ++w) {
      const int j = int(s_.reads.size() + w);
      if (s_.writes[w].along == Along::none) continue;
      const int i = step_.writes[w];
      const std::string value = store_expr(s_.writes[w].dtype, names_.at(i));
      if (s_.vec > 1) {
        vector_writes.push_back(int(w));
        body += "w_out" + std::to_string(w) + ".v[e] = " + value + ";\n";
      } else {
        body += element(j, "r") + " = " + value + ";\n";
      }
    }
    if (!body.empty()) {
      b += "  // outputs per element\n" + element_pass(rounds_ + 1, body, true, vector_writes);
    }
    std::string rows;
    for (std::size_t w = 0; w < step_.writes.size(); ++w) {
      if (s_.writes[w].along != Along::none) continue;
      const int j = int(s_.reads.size() + w);
      rows += "    out" + std::to_string(w) + "[" + base(j) +
              "] = " + store_expr(s_.writes[w].dtype, names_.at(step_.writes[w])) + ";\n";
    }
    if (!rows.empty()) {
      b += std::string("  // outputs per output element\n  if (") +
           (split() || clustered() ? "live && c == 0" : "live") + " && tr == 0) {\n" + rows +
           "  }\n";
    }
    return b;
  }

  // Parameters: outputs, inputs, scalars, then sizes and strides.
  std::string parameters() {
    std::string params;
    auto add = [&](const std::string& decl) {
      params += (params.empty() ? "    " : ",\n    ") + decl;
    };
    // Sizes and strides, passed as one nf_idx or as an nf_dims array.
    auto extent = [&](const std::string& nm, const Strides& values, bool array) {
      const std::string t =
          array ? "nf_dims<nf_idx, " + std::to_string(values.size()) + ">" : "nf_idx";
      add("const " + t + " " + nm);
      k_.params.push_back({KernelParam::Kind::extent, int(k_.extents.size())});
      k_.extents.push_back(values);
    };
    for (std::size_t j = 0; j < s_.writes.size(); ++j) {
      add(std::string(storage_ctype(s_.writes[j].dtype)) + "* __restrict__ out" +
          std::to_string(j));
      k_.params.push_back({KernelParam::Kind::output, int(j), s_.writes[j].dtype});
    }
    for (std::size_t j = 0; j < s_.reads.size(); ++j) {
      add("const " + std::string(storage_ctype(s_.reads[j].dtype)) + "* __restrict__ in" +
          std::to_string(j));
      k_.params.push_back({KernelParam::Kind::input, int(j), s_.reads[j].dtype});
    }
    for (const auto& [i, nm] : scalars_) {
      add("const " + ctype(i) + " " + nm);
      k_.params.push_back({KernelParam::Kind::scalar, i, node(i).dtype});
    }
    extent("rows", {numel(s_.kept)}, false);
    extent("n", {numel(s_.reduced)}, false);
    if (split()) {
      extent("chunks", {s_.chunks}, false);
      extent("chunk", {s_.chunk}, false);
      for (std::size_t t = 0; t < terms_.size(); ++t) {
        add(acc_type(terms_[t]) + "* __restrict__ ws" + std::to_string(t));
        k_.params.push_back({KernelParam::Kind::workspace, int(t)});
      }
    }
    if (s_.kept.size() > 1) extent("kept", s_.kept, true);
    if (any_general()) extent("red", s_.reduced, true);
    for (int j = 0; j < int(s_.reads.size() + s_.writes.size()); ++j) {
      const ReduceOperand& o = operand(j);
      if (!s_.kept.empty()) extent("kst_" + operand_name(j), o.kept, true);
      if (o.along == Along::strided || o.along == Along::general) {
        extent("rst_" + operand_name(j), o.reduced, o.along == Along::general);
      }
    }
    return params;
  }

  // Each operand's offset at the start of the thread's output; `operands`:
  // those that need it, all where empty.
  std::string output_bases(const std::vector<int>& operands = {}) const {
    if (s_.kept.empty()) return "";
    std::string b;
    const int kr = int(s_.kept.size());
    if (kr == 1) {
      b += "  const nf_idx k0 = o;\n";
    } else {
      b += "  nf_idx rest = o;\n";
      for (int d = kr - 1; d > 0; --d) {
        const std::string D = std::to_string(d);
        b +=
            "  const nf_idx k" + D + " = rest % kept.d[" + D + "];\n  rest /= kept.d[" + D + "];\n";
      }
      b += "  const nf_idx k0 = rest;\n";
    }
    for (int j = 0; j < int(s_.reads.size() + s_.writes.size()); ++j) {
      if (!operands.empty() && std::find(operands.begin(), operands.end(), j) == operands.end()) {
        continue;
      }
      std::string e;
      for (int d = 0; d < kr; ++d) {
        e += (d ? " + " : "") + std::string("k") + std::to_string(d) + " * kst_" + operand_name(j) +
             ".d[" + std::to_string(d) + "]";
      }
      b += "  const nf_idx b_" + operand_name(j) + " = " + e + ";\n";
    }
    return b;
  }

  std::string kernel_text() {
    const std::string TR = std::to_string(s_.tr), TO = std::to_string(s_.to);
    const std::string K = std::to_string(s_.cluster);
    std::string src =
        "// numfuse reduction kernel " + k_.name + "\n// signature: " + k_.signature + "\n";
    if (split()) {
      src += "//\n// Kernel " + std::to_string(stage_) + " of " + std::to_string(kernels()) +
             " of a reduction whose outputs have too many elements for one\n"
             "// block each: a block takes a chunk of `chunk` groups of " +
             std::to_string(s_.vec) +
             " element(s) of its\n// outputs. Kernel k combines the partial results of the "
             "passes before it,\n// then writes its chunk's partial result of pass k; the last "
             "kernel writes\n// the outputs.\n";
    } else if (clustered()) {
      src += "//\n// Each output element (a row) is reduced by a cluster of " + K + " blocks of " +
             TR + " threads;\n// a block holds " + std::to_string(s_.tr * s_.per) +
             " consecutive group(s) of " + std::to_string(s_.vec) +
             " element(s) in registers, and the blocks\n// meet through distributed shared "
             "memory after each pass.\n";
    } else {
      src += "//\n// Each output element (a row, or a column) is reduced by " + TR +
             " threads; a block\n// takes " + TO + " outputs. ";
      src += s_.per > 0
                 ? "A thread holds its " + std::to_string(s_.per) + " group(s) of " +
                       std::to_string(s_.vec) + " element(s)\n// in registers across passes.\n"
                 : "Each pass reads the elements from memory again.\n";
      if (s_.prefetch) {
        src +=
            "// A block loops over tiles of outputs, copying the next tile's elements\n"
            "// into shared memory while it works on the current one.\n";
      }
    }
    src += "typedef " + idx() + " nf_idx;\n\n";
    const std::string params = parameters();
    const int threads = s_.tr * s_.to;
    // A cluster's blocks of 4-byte values fit four to an SM with at most 64
    // registers a thread: at 72, three fitted, and softmax on 512x65536 lost
    // 7 points of copy bandwidth (bench/RESULTS.md). 8-byte values would
    // spill at 64.
    const bool narrow = std::none_of(step_.nodes.begin(), step_.nodes.end(),
                                     [&](int i) { return itemsize(node(i).dtype) > 4; });
    const std::string bounds =
        std::to_string(threads) +
        (clustered() && narrow ? ", " + std::to_string(65536 / (threads * 64)) : "");
    src += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " +
           (clustered() ? "__cluster_dims__(" + K + ", 1, 1) " : "") + k_.name + "(\n" + params +
           ") {\n";
    src += "  nf_wait_for_earlier_kernels();\n";
    // Two buffers of a slot of 16 bytes for each partial result that meets
    // the others; one slot more where the blocks of a cluster meet.
    const int slots = 2 * block_slots() + (clustered() ? 1 : 0);
    src +=
        "  __shared__ __align__(16) unsigned char nf_smem[" + std::to_string(slots * 16) + "];\n";
    if (s_.prefetch) src += prefetch_buffers();
    // A split step's block takes chunk c of the outputs of tile blockIdx.x / chunks.
    const std::string tile = split()       ? "((nf_idx)blockIdx.x / chunks)"
                             : clustered() ? "((nf_idx)blockIdx.x / " + K + ")"
                             : s_.prefetch ? "tile"
                                           : "(nf_idx)blockIdx.x";
    src += s_.columns ? "  const int tr = threadIdx.x / " + TO + ";\n"
                      : "  const int tr = threadIdx.x % " + TR + ";\n";
    src += s_.vec > 1 ? "  const nf_idx groups = n / " + std::to_string(s_.vec) + ";\n"
                      : "  const nf_idx groups = n;\n";
    std::string body =
        s_.columns ? "  const nf_idx o = " + tile + " * " + TO + " + threadIdx.x % " + TO + ";\n"
        : s_.prefetch && s_.to == 1
            ? "  const nf_idx o = tile;\n"
            : "  const nf_idx o = " + tile + " * " + TO + " + threadIdx.x / " + TR + ";\n";
    if (split()) body += "  const nf_idx c = (nf_idx)blockIdx.x % chunks;\n";
    if (clustered()) {
      body += "  const nf_idx c = (nf_idx)blockIdx.x % " + K +
              ";  // the block's rank in its cluster\n";
    }
    body += s_.prefetch && s_.to == 1 ? "  const bool live = true;  // tile < tiles == rows\n"
                                      : "  const bool live = o < rows;\n";
    if (split()) {
      body += "  const nf_idx g0 = c * chunk;\n";
      body += "  const nf_idx g1 = groups - g0 < chunk ? groups : g0 + chunk;\n";
    }
    if (clustered()) body += "  const nf_idx g0 = c * " + std::to_string(s_.tr * s_.per) + ";\n";
    body += output_bases();
    for (int i : step_.reads) {
      if (!per_output_.at(i)) continue;
      const int j = reads_.at(i);
      body += "  const " + ctype(i) + " " + names_.at(i) + " = live ? " +
              load_expr(s_.reads[j].dtype, "in" + std::to_string(j) + "[" + base(j) + "]") +
              " : (" + ctype(i) + ")0;\n";
    }
    body += per_output_values(0);
    if (s_.per > 0) body += held_loads() + kept_declarations();
    body += passes_and_stores();
    if (!s_.prefetch) return src + body + "}\n";
    src += "  const nf_idx tiles = (rows + " + TO + " - 1) / " + TO + ";\n";
    src += fetch("(nf_idx)blockIdx.x", "the block's first tile");
    src += "  for (nf_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {\n";
    return src + indented(body) + "  }\n}\n";
  }

  // Passes and stores; a split step's kernel stops after its pass.
  std::string passes_and_stores() const {
    std::string b;
    for (int round = 1; round <= rounds_; ++round) {
      if (split() && round == stage_) return b + pass(round) + write_partials(round);
      b += (split() ? gather(round) : pass(round)) + per_output_values(round);
    }
    return b + store_pass();
  }

  // Operands whose rows a prefetching kernel copies into shared memory.
  std::vector<int> prefetched() const {
    std::vector<int> reads;
    for (std::size_t j = 0; j < s_.reads.size(); ++j) {
      if (s_.reads[j].along != Along::none) reads.push_back(int(j));
    }
    return reads;
  }

  // One slot of shared memory per group a thread holds, of each prefetched
  // read: group k at k * threads + threadIdx.x, so that a warp's copies fill
  // consecutive addresses. Each thread reads back only the slots it filled.
  std::string prefetch_buffers() const {
    std::string b = "  // the next tile's elements, copied in while the block works on this one\n";
    b += "  NF_DYNAMIC_SHARED(nf_next);\n";
    std::int64_t offset = 0;
    for (int j : prefetched()) {
      const std::string vt = vec_type(s_.reads[j].dtype);
      b += "  " + vt + "* const s_in" + std::to_string(j) + " = (" + vt + "*)(nf_next + " +
           std::to_string(offset) + ");\n";
      offset += prefetch_bytes(s_, s_.reads[j]);
    }
    return b;
  }

  std::string slot() const { return "k * " + std::to_string(s_.tr * s_.to) + " + threadIdx.x"; }

  // Whether the thread's held group g lies in its row, `live` its row's.
  std::string held_guard(const std::string& live) const {
    return s_.whole ? live : live + " && g < groups";
  }

  // Starts copying the thread's groups of tile `tile` into its slots.
  std::string fetch(const std::string& tile, const std::string& what) const {
    const std::string V = std::to_string(s_.vec);
    std::string b = "  {  // " + what + " starts coming into shared memory\n";
    std::string scope = "  const nf_idx o = " + tile + " * " + std::to_string(s_.to) +
                        " + threadIdx.x / " + std::to_string(s_.tr) + ";\n";
    scope += output_bases(prefetched());
    scope += "#pragma unroll\n  for (int k = 0; k < " + std::to_string(s_.per) + "; ++k) {\n";
    scope += "    const nf_idx g = tr + (nf_idx)k * " + std::to_string(s_.tr) + ";\n";
    scope += "    if (" + held_guard("o < rows") + ") {\n";
    for (int j : prefetched()) {
      const std::string J = std::to_string(j);
      scope += "      nf_fetch<" + std::to_string(s_.vec * itemsize(s_.reads[j].dtype)) +
               ">(&s_in" + J + "[" + slot() + "], in" + J + " + " + base(j) + " + g * " + V +
               ");\n";
    }
    scope += "    }\n  }\n";
    return b + indented(scope) + "  }\n";
  }

  // `lines` one level deeper; preprocessor lines stay where they are.
  static std::string indented(const std::string& lines) {
    std::string out;
    for (std::size_t at = 0; at < lines.size();) {
      const std::size_t eol = lines.find('\n', at);
      const std::string line = lines.substr(at, eol - at);
      out += (line.rfind("#", 0) == 0 ? "" : "  ") + line + "\n";
      at = eol + 1;
    }
    return out;
  }

  int block_slots() const {
    const int threads = s_.tr * s_.to;
    return s_.columns ? threads : std::max(1, threads / 32);
  }

  std::string kept_declarations() const {
    if (kept_.empty()) return "";
    std::string b = "  // values one pass computes and a later one uses again\n";
    for (const auto& [i, stage] : kept_) {
      b += "  " + ctype(i) + " " + kept_name(i) + "[" + std::to_string(s_.per) + "][" +
           std::to_string(s_.vec) + "];\n";
    }
    return b;
  }

  // Every element the thread reads, into registers, before any is used.
  std::string held_loads() const {
    const std::string V = std::to_string(s_.vec), P = std::to_string(s_.per);
    std::string b = "  // the thread's elements, held in registers\n";
    std::string loads;
    for (std::size_t j = 0; j < s_.reads.size(); ++j) {
      if (s_.reads[j].along == Along::none) continue;
      const std::string J = std::to_string(j), vt = vec_type(s_.reads[j].dtype);
      b += "  " + vt + " v_in" + J + "[" + P + "] = {};\n";
      if (s_.prefetch) {
        loads += "      v_in" + J + "[k] = s_in" + J + "[" + slot() + "];\n";
      } else if (s_.vec > 1) {
        loads += "      v_in" + J + "[k] = *(const " + vt + "*)(in" + J + " + " + base(int(j)) +
                 " + g * " + V + ");\n";
      } else {
        loads += "      v_in" + J + "[k].v[0] = " + element(int(j), "r") + ";\n";
      }
    }
    if (loads.empty()) return b;
    if (s_.prefetch) b += "  nf_fetched();  // the tile's copies are in\n";
    b += "#pragma unroll\n  for (int k = 0; k < " + P + "; ++k) {\n";
    b += "    const nf_idx g = " + first_group() + "tr + (nf_idx)k * " + std::to_string(s_.tr) +
         ";\n";
    b += "    if (" + held_guard("live") + ") {\n";
    if (s_.vec == 1) {
      b += "      const nf_idx r = g;\n" + reduced_coordinates("      ");
    }
    b += loads + "    }\n  }\n";
    if (!s_.prefetch) return b;
    // A thread's copies overwrite only the slots it has just read, so the next
    // tile may start coming in at once: waiting for the block's slowest warp
    // cost softmax on 1024x32768 up to 2 points of copy bandwidth
    // (bench/RESULTS.md). The combinations take turns between two buffers,
    // which carry on across tiles when a tile makes an even number of them;
    // after an odd number, this tile's first would reuse the buffer the last
    // tile's last is still being read from, and a barrier keeps them apart.
    const bool turns_carry_on = terms_.size() % 2 == 0;
    return b + (turns_carry_on ? "" : "  __syncthreads();\n") +
           fetch("(tile + (nf_idx)gridDim.x)", "the next tile");
  }

  const ReduceSpec& s_;
  const Program& p_;
  const Step& step_;
  const int stage_;
  GeneratedKernel k_;
  std::map<int, int> reads_;  // node -> index among the step's reads
  std::map<int, std::string> names_;
  std::map<int, std::string> scalars_;
  std::map<int, bool> per_output_;
  std::map<int, int> ready_;  // pass after which a per-output value exists (0: before any)
  std::map<int, std::vector<int>> result_;  // reduction -> its terms
  std::map<int, int> kept_;                 // value held in registers -> the stage that computes it
  std::vector<Term> terms_;
  int rounds_ = 0;
};

std::vector<GeneratedKernel> kernels(const ReduceSpec& spec, bool with_source) {
  if (spec.chunks <= 1) return {Generator(spec, 0).run(with_source)};
  std::vector<GeneratedKernel> out;
  const int n = Generator(spec, 1).kernels();
  for (int stage = 1; stage <= n; ++stage) out.push_back(Generator(spec, stage).run(with_source));
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
