// The model of a reduction kernel, whatever walk it takes: the names of its
// values, which are per output and which per element, the terms each pass
// accumulates, the values kept in registers between passes, what each stage
// computes at an element, the C spelling of values, operands and terms, and
// the parameters and signature. The walks (reduce_walk.hpp) and the driver
// (reduce_codegen.cpp) build every kernel of a step from one model.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/generated_kernel.hpp"
#include "codegen/reduce_spec.hpp"
#include "graph/op_table.hpp"

namespace nf::jit {

class SourceWriter;

// A term a kernel accumulates: a monoid (TermKind, jit/runtime/nf_reduce.h)
// over the elements of one value, in one pass; two reductions of the same
// values share terms (mean and var of the same rows: one sum).
struct Term {
  TermKind kind;
  int input;                  // the node whose elements it accumulates
  int round;                  // the pass that accumulates it, from 1
  std::string centre;         // deviations: the per-output value they are taken from
  std::string name;           // its accumulator
  bool mean_used = false;     // whether the mean of this sum is a centre
  bool centre_first = false;  // the centre is the mean of the output's first elements
};

// The element values (not per output) a stage computes, reads included,
// and those it takes from registers where an earlier pass left them; each
// in program order.
struct Closure {
  std::vector<int> computed;
  std::vector<int> from_registers;
};

// A kernel's parameters as its source declares them and the launcher binds
// them, in launch order.
struct KernelParams {
  std::string text;  // the declarations, one a line
  std::vector<KernelParam> params;
  std::vector<Strides> extents;  // values of the `extent` parameters
  void add(const std::string& decl, const KernelParam& param);
  // Sizes and strides, passed as one nf_idx or as an nf_dims array.
  void extent(const std::string& name, const Strides& values, bool array);
  // Dims a kernel finds coordinates along, each with what divides by it
  // without a division instruction: an nf_walk_dims (fast_division.hpp).
  void walk_dims(const std::string& name, const Shape& dims, bool index64);
};

class ReduceModel {
 public:
  explicit ReduceModel(const ReduceSpec& spec);

  const ReduceSpec& spec() const { return s_; }
  const Step& step() const { return step_; }
  const Node& node(int i) const { return *p_.nodes[i]; }
  const ProgramInputs& inputs(int i) const { return p_.inputs[i]; }
  bool is_read(int i) const { return reads_.count(i) != 0; }
  int read_index(int i) const { return reads_.at(i); }  // among the step's reads
  const std::string& name(int i) const { return names_.at(i); }
  int rounds() const { return rounds_; }  // passes over the elements
  const std::vector<Term>& terms() const { return terms_; }

  // Everything the source depends on, but which kernel of a step it is.
  std::string signature() const;

  // The C spelling of values: node i's compute type, the index type, a
  // vector of one group of dtype t, and the element's place in its group.
  std::string ctype(int i) const;
  std::string idx() const { return s_.index64 ? "long long" : "int"; }
  std::string vec_type(DType t) const;
  std::string in_group() const { return s_.vec > 1 ? "e" : "0"; }

  // Operand j of the kernel: reads first, then writes.
  const ReduceOperand& operand(int j) const;
  int operands() const { return int(s_.reads.size() + s_.writes.size()); }
  std::string operand_name(int j) const;
  // Offset of operand j's element at the output's start, and within it at r.
  std::string base(int j) const { return s_.kept.empty() ? "0" : "b_" + operand_name(j); }
  std::string within(int j, const std::string& r) const;
  std::string element(int j, const std::string& r) const;
  // Columns of pairs (ReduceSpec::pairs): the word that holds read j's
  // elements of the thread's two outputs at r.
  std::string pair_word(int j, const std::string& r) const;
  // The address of operand j's group g along its row (vec > 1), `head`
  // elements in where rows are shifted (ReduceSpec::shifted); over several
  // reduced dims, from the coordinates of its first element; covered rows,
  // the vector covered_group found.
  std::string group_at(int j, const std::string& g) const;
  // Shifted rows: the line that sets `head`, where the row's first whole
  // group starts, from the address of the first operand that varies along it.
  void row_shift(SourceWriter& w) const;
  bool any_general() const;
  // Covered rows (ReduceSpec::covered), at held group k (group g): the run
  // and which of its covering vectors g is (kk), each varying operand's
  // offset of the run's first element, and where vector kk's first lane lies,
  // in the run (c_lane[k], below 0 where the run starts past it) and among
  // the reduced elements (c_first[k]).
  void covered_group(SourceWriter& w) const;
  // The address of operand j's covering vector, after covered_group.
  std::string covered_vector(int j) const;
  // Covered rows: the length of a run, the innermost reduced dim.
  std::string run_length() const;

  Closure element_closure(int stage) const;
  // What stage `stage` computes at an element none of whose values are held
  // in registers: all of it (a shifted row's ends).
  Closure loose_closure(int stage) const { return closure_of(stage_targets(stage), 0); }

  // A term's monoid (jit/runtime/nf_reduce.h), its accumulator type, its
  // identity and the statement that takes element r in.
  std::string acc_type(const Term& t) const;
  std::string identity(const Term& t) const;
  std::string accumulate(const Term& t) const;
  std::string combine_op(const Term& t) const;
  std::size_t acc_bytes(const Term& t) const;

  // Statements, written at the writer's depth.
  // The coordinates x0, x1, ... of reduced index r, where an operand needs them.
  void reduced_coordinates(SourceWriter& w) const;
  // Rows read an element at a time, at group g: the element r, and where
  // `addressed`, its coordinates. Run lanes (ReduceSpec::run_lanes) find
  // both from the thread's place along the runs, with no division.
  void group_element(SourceWriter& w, bool addressed) const;
  // Run lanes, before the block's outputs: the thread's place along the
  // runs (lane_d), its first run (lane_q), the runs a step of the tr threads
  // of an output reads (runs_step), and its `groups`: tr for each run it
  // reads.
  void run_lanes(SourceWriter& w) const;
  // Statements computing `values` (a stage's closure) at element r. Read j's
  // element is `read_at(j)`; `addressed`: some operand is addressed at r.
  void element_values(SourceWriter& w, const Closure& values, int stage,
                      const std::function<std::string(int)>& read_at, bool addressed) const;
  // Before pass `round`: the centres its terms take from the first elements
  // (Term::centre_first): the mean of each output's first kCentreElements,
  // 0 where an output has none.
  void first_elements(SourceWriter& w, int round) const;
  // After pass `round`: the per-output values it makes available.
  void per_output_values(SourceWriter& w, int round) const;
  // Reads that are one value per output, loaded once.
  void per_output_reads(SourceWriter& w) const;
  // Each operand's offset at the start of the thread's output; `operands`:
  // those that need it, all where empty.
  void output_bases(SourceWriter& w, const std::vector<int>& operands = {}) const;
  void kept_declarations(SourceWriter& w) const;

  // Parameters: outputs, inputs, scalars, then sizes (before: up to the
  // reduced length n) and strides (after); a walk's own come between.
  void parameters_before(KernelParams& p) const;
  void parameters_after(KernelParams& p) const;

 private:
  void name_values();
  void classify();
  int term(TermKind kind, int input, int round, const std::string& centre = "");
  void plan_terms();
  std::vector<int> stage_targets(int stage) const;
  // The element values that `targets` need, at stage `stage`.
  Closure closure_of(std::vector<int> targets, int stage) const;
  void plan_registers();
  std::string kept_name(int i) const { return "c_" + names_.at(i); }
  bool divides_by_output(int i) const;
  std::string expr(int i) const;
  std::string finish(int i) const;

  const ReduceSpec& s_;
  const Program& p_;
  const Step& step_;
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

}  // namespace nf::jit
