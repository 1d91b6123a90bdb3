// One fused elementwise kernel, as the driver (fused_codegen.cpp) puts it
// together from its spec and its walk: the parts every walk shares (the
// canonical names, the signature, the element function, the parameters, the
// element body), the walk asked for the loops around the body.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "codegen/fused_walk.hpp"
#include "codegen/generated_kernel.hpp"

namespace nf::jit {

class SourceWriter;

class FusedKernel {
 public:
  explicit FusedKernel(const FusedSpec& spec);

  // The kernel; its source too where `with_source`.
  GeneratedKernel run(bool with_source);

  const FusedSpec& spec() const { return s_; }
  // The element function's call at element i: each array read j loaded from
  // `read(j)` (a value of its storage type), the result registers rJ, the
  // call. The stores are the caller's.
  void element(SourceWriter& w, const std::function<std::string(std::size_t)>& read) const;
  // Each output's result rJ stored where it lies (offset).
  void stores(SourceWriter& w) const;
  // A loop of one element a thread each trip, from element `start`: the
  // element's coordinates where the walk computes them, its loads, the call,
  // its stores.
  void element_loop(SourceWriter& w, const std::string& start) const;
  // Where an array reached as `a` lies at element i, or at the coordinates
  // c0... with its strides `strides` (st_in1, st_out0).
  std::string offset(const std::string& strides, Access a) const;

 private:
  const Node& node(int i) const { return *p_.nodes[i]; }
  void name_values();
  std::string idx() const { return s_.index64 ? "long long" : "int"; }
  std::string signature() const;
  std::string collapse_name() const;
  std::string value_expr(int i) const;
  void element_function(SourceWriter& w) const;
  std::string scalar_params(const std::string& sep) const;
  std::string scalar_args() const;
  std::string parameters();
  std::string kernel_text();

  const FusedSpec& s_;
  const Program& p_;
  const Step& step_;
  const FusedWalk& walk_;
  const int rank_;
  const bool coords_;  // whether the kernel computes coordinates
  int scalar_count_ = 0, random_count_ = 0;
  GeneratedKernel k_;
  std::map<int, std::string> names_;
  std::map<int, std::string> scalars_;
};

}  // namespace nf::jit
