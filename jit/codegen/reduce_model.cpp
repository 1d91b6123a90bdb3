#include "codegen/reduce_model.hpp"

#include <algorithm>
#include <set>

#include "codegen/expressions.hpp"
#include "codegen/fast_division.hpp"
#include "codegen/monoids.hpp"
#include "codegen/source_writer.hpp"
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

constexpr int kKeptWords = 32;  // registers a thread holds computed values in, at most

}  // namespace

void KernelParams::add(const std::string& decl, const KernelParam& param) {
  text += (text.empty() ? "    " : ",\n    ") + decl;
  params.push_back(param);
}

void KernelParams::extent(const std::string& name, const Strides& values, bool array) {
  const std::string t = array ? "nf_dims<nf_idx, " + std::to_string(values.size()) + ">" : "nf_idx";
  add("const " + t + " " + name, {KernelParam::Kind::extent, int(extents.size())});
  extents.push_back(values);
}

void KernelParams::walk_dims(const std::string& name, const Shape& dims, bool index64) {
  add("const nf_walk_dims<nf_idx, " + std::to_string(dims.size()) + "> " + name,
      {KernelParam::Kind::extent, int(extents.size())});
  extents.push_back(walk_dims_values(dims, index64));
}

ReduceModel::ReduceModel(const ReduceSpec& spec) : s_(spec), p_(*spec.program), step_(*spec.step) {
  name_values();
  classify();
  plan_terms();
  plan_registers();
}

// Canonical names, as in fused kernels: aJ for the J-th array read, tK for
// computed values, sM for scalar parameters, pK for accumulators.
void ReduceModel::name_values() {
  for (std::size_t j = 0; j < step_.reads.size(); ++j) {
    reads_[step_.reads[j]] = int(j);
    // A std::string first: GCC 12 takes "a" + std::to_string(j) here for
    // an overlapping copy (-Wrestrict, a false positive).
    names_[step_.reads[j]] = std::string("a") + std::to_string(j);
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
void ReduceModel::classify() {
  for (int i : step_.reads) per_output_[i] = s_.reads[reads_.at(i)].along == Along::none;
  for (int i : step_.nodes) {
    if (is_read(i)) continue;
    const OpKind k = op_kind(node(i).op);
    bool row = k == OpKind::constant || k == OpKind::reduction;
    if (!row) {
      row =
          std::all_of(inputs(i).begin(), inputs(i).end(), [&](int j) { return per_output_.at(j); });
    }
    per_output_[i] = row;
  }
}

int ReduceModel::term(TermKind kind, int input, int round, const std::string& centre) {
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    const Term& x = terms_[t];
    if (x.kind == kind && x.input == input && x.round == round && x.centre == centre) {
      return int(t);
    }
  }
  terms_.push_back({kind, input, round, centre, "p" + std::to_string(terms_.size())});
  return int(terms_.size() - 1);
}

// Rows held by one block of at most kTwoPassThreads threads take a second pass
// over registers, about the first's mean: on the H100 that is as fast as one
// pass about the first elements, or faster (layer norm over rows of 1024 and
// 4096 elements), while rows of larger blocks, and of clusters, gain from
// meeting once (bench/RESULTS.md, 2026-11-25).
constexpr int kTwoPassThreads = 256;

// Which pass accumulates each reduction's terms (ops.def's passes): the
// first after every reduction its input depends on, and the next for a
// second term, centred on the first's result; or the same pass, centred on
// the mean of the output's first elements, unless a block holds the
// elements and meets cheaply (centred_on_first).
void ReduceModel::plan_terms() {
  const bool held = s_.per > 0 && s_.cluster == 1 && s_.tr <= kTwoPassThreads;
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
      bool first = false;
      if (previous >= 0 && centred_on_first(kind, held)) {
        first = true;
        centre = "f_" + names_.at(x);
        --round;
      } else if (previous >= 0 && term_centre(kind) == Centre::mean) {
        terms_[previous].mean_used = true;
        centre = "m" + terms_[previous].name.substr(1);
      } else if (previous >= 0 && term_centre(kind) == Centre::value) {
        centre = terms_[previous].name;
      }
      previous = term(kind, x, ++round, centre);
      terms_[previous].centre_first = first;
      result_[i].push_back(previous);
    }
    ready_[i] = round;
    rounds_ = std::max(rounds_, round);
  }
}

std::string ReduceModel::signature() const {
  std::string sig =
      std::string("reduce;idx") + (s_.index64 ? "64" : "32") + (s_.columns ? ";columns" : ";rows") +
      ";tr" + std::to_string(s_.tr) + ";to" + std::to_string(s_.to) + ";per" +
      std::to_string(s_.per) + ";vec" + std::to_string(s_.vec) + ";kept" +
      std::to_string(s_.kept.size()) + ";red" + std::to_string(s_.reduced.size()) +
      (s_.cluster > 1 ? ";cluster" + std::to_string(s_.cluster) : "") +
      (s_.prefetch ? ";prefetch" : "") + (s_.shared ? ";shared" : "") + (s_.words ? ";words" : "") +
      (s_.staged ? ";staged" : "") + (s_.shifted ? ";shifted" : "") +
      (s_.covered ? ";covered" : "") + (s_.run_lanes ? ";run-lanes" : "") +
      (s_.pairs ? ";pairs" : "") + (s_.reverse ? ";reverse" : "") +
      (s_.last_first ? ";last-first" : "") + (s_.whole ? ";whole" : "") + ";in";
  for (const auto& o : s_.reads)
    sig += std::string(":") + std::string(nf::name(o.dtype)) + "/" + along_name(o.along);
  sig += ";out";
  for (const auto& o : s_.writes)
    sig += std::string(":") + std::string(nf::name(o.dtype)) + "/" + along_name(o.along);
  for (int i : step_.nodes) {
    if (is_read(i)) continue;
    const Node& n = node(i);
    sig += ";" + names_.at(i) + "=" + std::string(op_name(n.op)) + "." +
           std::string(nf::name(n.dtype));
    for (int in : inputs(i)) sig += "," + names_.at(in);
    sig += code_attributes(n);
  }
  sig += ";write";
  for (int w : step_.writes) sig += ":" + names_.at(w);
  return sig;
}

std::string ReduceModel::ctype(int i) const {
  return compute_ctype(node(i).dtype);
}

std::string ReduceModel::vec_type(DType t) const {
  return vector_ctype(t, s_.vec);
}

const ReduceOperand& ReduceModel::operand(int j) const {
  return j < int(s_.reads.size()) ? s_.reads[j] : s_.writes[j - s_.reads.size()];
}

std::string ReduceModel::operand_name(int j) const {
  const int reads = int(s_.reads.size());
  return j < reads ? "in" + std::to_string(j) : "out" + std::to_string(j - reads);
}

std::string ReduceModel::within(int j, const std::string& r) const {
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
        e += (d ? " + " : "") + std::string("x") + std::to_string(d) + " * rst_" + operand_name(j) +
             ".d[" + std::to_string(d) + "]";
      }
      return "(" + e + ")";
    }
  }
}

std::string ReduceModel::element(int j, const std::string& r) const {
  return operand_name(j) + "[" + base(j) + " + " + within(j, r) + "]";
}

std::string ReduceModel::pair_word(int j, const std::string& r) const {
  return "nf_pair_word(&" + element(j, r) + ")";
}

std::string ReduceModel::group_at(int j, const std::string& g) const {
  if (s_.covered) return covered_vector(j);
  const std::string first = g + " * " + std::to_string(s_.vec);
  if (operand(j).along == Along::general) {
    return operand_name(j) + " + " + base(j) + " + nf_reduced_offset(red, rst_" + operand_name(j) +
           ", " + first + ")";
  }
  return operand_name(j) + " + " + base(j) + (s_.shifted ? " + head" : "") + " + " + first;
}

void ReduceModel::row_shift(SourceWriter& w) const {
  if (!s_.shifted) return;
  for (int j = 0; j < operands(); ++j) {
    if (operand(j).along == Along::none) continue;
    const std::string a = operand_name(j), V = std::to_string(s_.vec);
    w.line("// where the row's first whole group starts, the same for every operand");
    w.line("const nf_idx head = (" + V + " - (nf_idx)(((unsigned long long)(" + a + " + " +
           base(j) + ") / sizeof(*" + a + ")) % " + V + ")) % " + V + ";");
    return;
  }
}

void ReduceModel::covered_group(SourceWriter& w) const {
  const std::string V = std::to_string(s_.vec), last = std::to_string(s_.reduced.size() - 1);
  w.line("nf_idx q = g;");
  w.line("const nf_idx kk = nf_coordinate(cov, " + last + ", q);  // q: the run, kk: its vector");
  std::string lead;
  for (int j = 0; j < operands(); ++j) {
    if (operand(j).along == Along::none) continue;
    const std::string a = operand_name(j);
    w.line("const nf_idx run_" + a + " = " + base(j) + " + nf_run_offset(cov, rst_" + a + ", q);");
    if (lead.empty()) lead = "(unsigned long long)(" + a + " + run_" + a + ") / sizeof(*" + a + ")";
  }
  w.line("// where the run starts in its first vector, the same for every operand");
  w.line("const nf_idx lead = (nf_idx)((" + lead + ") % " + V + ");");
  w.line("c_lane[k] = kk * " + V + " - lead;");
  w.line("c_first[k] = q * " + run_length() + " + c_lane[k];");
}

std::string ReduceModel::run_length() const {
  return "red.d[" + std::to_string(s_.reduced.size() - 1) + "]";
}

std::string ReduceModel::covered_vector(int j) const {
  const std::string a = operand_name(j);
  return a + " + run_" + a + " + c_lane[k]";
}

bool ReduceModel::any_general() const {
  for (int j = 0; j < operands(); ++j) {
    if (operand(j).along == Along::general) return true;
  }
  return false;
}

// What stage `stage` (passes 1 to rounds_, then the stores) works on at
// each element: the values its accumulators or outputs take.
std::vector<int> ReduceModel::stage_targets(int stage) const {
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

Closure ReduceModel::element_closure(int stage) const {
  return closure_of(stage_targets(stage), stage);
}

Closure ReduceModel::closure_of(std::vector<int> stack, int stage) const {
  Closure c;
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
void ReduceModel::plan_registers() {
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

// A division of element values by a per-output value (softmax's
// exp(x - max) / sum): the divisor's reciprocal is taken once per output
// (nf_divisor_of), and nf_divide_by corrects each product to the quotient.
bool ReduceModel::divides_by_output(int i) const {
  return node(i).op == OpId::divide && !per_output_.at(i) && per_output_.at(inputs(i)[1]);
}

std::string ReduceModel::expr(int i) const {
  std::vector<std::string> in;
  for (int j : inputs(i)) in.push_back(names_.at(j));
  if (divides_by_output(i)) {
    return "nf_divide_by(" + in[0] + ", d_" + names_.at(i) + ")";
  }
  const auto param = scalars_.find(i);
  return node_expr(node(i), in, param == scalars_.end() ? "" : param->second, "");
}

std::string ReduceModel::acc_type(const Term& t) const {
  return monoid_name(t.kind) + "::acc<" + ctype(t.input) + ">";
}
std::string ReduceModel::identity(const Term& t) const {
  return monoid_name(t.kind) + "::identity<" + ctype(t.input) + ">()";
}
std::string ReduceModel::accumulate(const Term& t) const {
  return t.name + " = " + monoid_name(t.kind) + "::accumulate(" + t.name + ", " +
         names_.at(t.input) + ", r" + (t.centre.empty() ? "" : ", " + t.centre) + ");";
}
std::string ReduceModel::combine_op(const Term& t) const {
  return monoid_name(t.kind) + "()";
}
std::size_t ReduceModel::acc_bytes(const Term& t) const {
  return accumulator_bytes(t.kind, node(t.input).dtype);
}

// The result of reduction i from its terms (ops.def's finish).
std::string ReduceModel::finish(int i) const {
  const Node& n = node(i);
  std::string v = std::string(reduction_finish(n.op)) + "(";
  for (int t : result_.at(i)) v += terms_[t].name + ", ";
  return "nf_convert<" + ctype(i) + ">(" + v + "n, " + std::to_string(n.ddof) + "))";
}

void ReduceModel::reduced_coordinates(SourceWriter& w) const {
  if (!any_general()) return;
  w.line("nf_idx q = r;");
  for (int d = int(s_.reduced.size()) - 1; d > 0; --d) {
    const std::string D = std::to_string(d);
    w.line("const nf_idx x" + D + " = nf_coordinate(red, " + D + ", q);");
  }
  w.line("const nf_idx x0 = q;");
}

void ReduceModel::group_element(SourceWriter& w, bool addressed) const {
  if (!s_.run_lanes) {
    w.line("const nf_idx r = g;");
    if (addressed) reduced_coordinates(w);
    return;
  }
  const std::string T = std::to_string(s_.tr), last = std::to_string(s_.reduced.size() - 1);
  w.line("const nf_idx rq = g / " + T + " * runs_step + lane_q;  // the run");
  w.line("const nf_idx r = rq * " + run_length() + " + lane_d;");
  if (!addressed || !any_general()) return;
  if (s_.reduced.size() == 2) {
    w.line("const nf_idx x0 = rq, x1 = lane_d;");
    return;
  }
  w.line("nf_idx q = rq;");
  for (int d = int(s_.reduced.size()) - 2; d > 0; --d) {
    const std::string D = std::to_string(d);
    w.line("const nf_idx x" + D + " = nf_coordinate(red, " + D + ", q);");
  }
  w.line("const nf_idx x0 = q, x" + last + " = lane_d;");
}

void ReduceModel::run_lanes(SourceWriter& w) const {
  const std::string T = std::to_string(s_.tr), last = std::to_string(s_.reduced.size() - 1);
  w.line("// the thread's place along the runs, and the runs it reads: from lane_q,");
  w.line("// every runs_step-th (" + T + " threads take runs_step runs a step)");
  w.line("nf_idx lane_q = tr;");
  w.line("const nf_idx lane_d = nf_coordinate(red, " + last + ", lane_q);");
  w.line("nf_idx runs_step = " + T + ", runs = n;");
  w.line("nf_coordinate(red, " + last + ", runs_step);");
  w.line("nf_coordinate(red, " + last + ", runs);");
  w.line("// past the last whole run of a step, a thread reads nothing");
  w.line("const nf_idx groups = lane_q < runs_step && lane_q < runs");
  w.line("    ? (runs - lane_q + runs_step - 1) / runs_step * " + T + " : 0;");
}

void ReduceModel::element_values(SourceWriter& w, const Closure& values, int stage,
                                 const std::function<std::string(int)>& read_at,
                                 bool addressed) const {
  if (addressed) reduced_coordinates(w);
  const std::string e = in_group();
  for (int i : values.computed) {
    if (!is_read(i)) continue;
    const int j = reads_.at(i);
    w.line("const " + ctype(i) + " a" + std::to_string(j) + " = " +
           load_expr(s_.reads[j].dtype, read_at(j)) + ";");
  }
  for (int i : values.from_registers) {
    w.line("const " + ctype(i) + " " + names_.at(i) + " = " + kept_name(i) + "[k][" + e + "];");
  }
  for (int i : values.computed) {
    if (is_read(i)) continue;
    w.line("const " + ctype(i) + " " + names_.at(i) + " = " + expr(i) + ";");
    const auto kept = kept_.find(i);
    if (kept != kept_.end() && kept->second == stage) {
      w.line(kept_name(i) + "[k][" + e + "] = " + names_.at(i) + ";");
    }
  }
}

void ReduceModel::first_elements(SourceWriter& w, int round) const {
  std::set<int> done;
  for (const Term& t : terms_) {
    if (t.round != round || !t.centre_first || !done.insert(t.input).second) continue;
    const std::string T = ctype(t.input), K = std::to_string(kCentreElements);
    w.line("// the mean of each output's first " + K +
           " elements, the centre of this pass's deviations");
    w.line(T + " " + t.centre + " = (" + T + ")0;");
    w.open("if (live && n > 0)");
    w.line("const nf_idx firsts = n < " + K + " ? n : " + K + ";");
    // Unrolled, so that the loads are issued together rather than one after
    // another's value.
    w.line("#pragma unroll");
    w.open("for (nf_idx r = 0; r < " + K + "; ++r)");
    w.open("if (r < firsts)");
    element_values(
        w, closure_of({t.input}, 0), 0, [&](int j) { return element(j, "r"); }, any_general());
    w.line(t.centre + " = nf_add(" + t.centre + ", " + names_.at(t.input) + ");");
    w.close();
    w.close();
    w.line(t.centre + " = " + t.centre + " / (" + T + ")firsts;");
    w.close();
  }
}

void ReduceModel::per_output_values(SourceWriter& w, int round) const {
  for (int i : step_.nodes) {
    if (is_read(i) || !per_output_.at(i) || ready_.at(i) != round) continue;
    const std::string v = op_kind(node(i).op) == OpKind::reduction ? finish(i) : expr(i);
    w.line("const " + ctype(i) + " " + names_.at(i) + " = " + v + ";");
  }
  for (int i : step_.nodes) {
    if (is_read(i) || !divides_by_output(i) || ready_.at(inputs(i)[1]) != round) continue;
    w.line("const nf_divisor<" + ctype(i) + "> d_" + names_.at(i) + " = nf_divisor_of<" + ctype(i) +
           ">(" + names_.at(inputs(i)[1]) + ");");
  }
}

void ReduceModel::per_output_reads(SourceWriter& w) const {
  for (int i : step_.reads) {
    if (!per_output_.at(i)) continue;
    const int j = reads_.at(i);
    w.line("const " + ctype(i) + " " + names_.at(i) + " = live ? " +
           load_expr(s_.reads[j].dtype, "in" + std::to_string(j) + "[" + base(j) + "]") + " : (" +
           ctype(i) + ")0;");
  }
}

void ReduceModel::output_bases(SourceWriter& w, const std::vector<int>& operands) const {
  if (s_.kept.empty()) return;
  const int kr = int(s_.kept.size());
  if (kr == 1) {
    w.line("const nf_idx k0 = o;");
  } else {
    w.line("nf_idx rest = o;");
    for (int d = kr - 1; d > 0; --d) {
      const std::string D = std::to_string(d);
      w.line("const nf_idx k" + D + " = nf_coordinate(kept, " + D + ", rest);");
    }
    w.line("const nf_idx k0 = rest;");
  }
  for (int j = 0; j < this->operands(); ++j) {
    if (!operands.empty() && std::find(operands.begin(), operands.end(), j) == operands.end()) {
      continue;
    }
    std::string e;
    for (int d = 0; d < kr; ++d) {
      e += (d ? " + " : "") + std::string("k") + std::to_string(d) + " * kst_" + operand_name(j) +
           ".d[" + std::to_string(d) + "]";
    }
    w.line("const nf_idx b_" + operand_name(j) + " = " + e + ";");
  }
}

void ReduceModel::kept_declarations(SourceWriter& w) const {
  if (kept_.empty()) return;
  w.line("// values one pass computes and a later one uses again");
  for (const auto& [i, stage] : kept_) {
    w.line(ctype(i) + " " + kept_name(i) + "[" + std::to_string(s_.per) + "][" +
           std::to_string(s_.vec) + "];");
  }
}

void ReduceModel::parameters_before(KernelParams& p) const {
  for (std::size_t j = 0; j < s_.writes.size(); ++j) {
    p.add(std::string(storage_ctype(s_.writes[j].dtype)) + "* __restrict__ out" + std::to_string(j),
          {KernelParam::Kind::output, int(j), s_.writes[j].dtype});
  }
  for (std::size_t j = 0; j < s_.reads.size(); ++j) {
    p.add("const " + std::string(storage_ctype(s_.reads[j].dtype)) + "* __restrict__ in" +
              std::to_string(j),
          {KernelParam::Kind::input, int(j), s_.reads[j].dtype});
  }
  for (const auto& [i, nm] : scalars_) {
    p.add("const " + ctype(i) + " " + nm, {KernelParam::Kind::scalar, i, node(i).dtype});
  }
  p.extent("rows", {numel(s_.kept)}, false);
  p.extent("n", {numel(s_.reduced)}, false);
}

void ReduceModel::parameters_after(KernelParams& p) const {
  if (s_.kept.size() > 1) p.walk_dims("kept", s_.kept, s_.index64);
  if (any_general()) p.walk_dims("red", s_.reduced, s_.index64);
  if (s_.covered) {
    Shape cover = s_.reduced;
    cover.back() = covering(s_);
    p.walk_dims("cov", cover, s_.index64);
  }
  for (int j = 0; j < operands(); ++j) {
    const ReduceOperand& o = operand(j);
    if (!s_.kept.empty()) p.extent("kst_" + operand_name(j), o.kept, true);
    if (o.along == Along::strided || o.along == Along::general) {
      p.extent("rst_" + operand_name(j), o.reduced, o.along == Along::general);
    }
  }
}

}  // namespace nf::jit
