// The driver of fused elementwise kernels: the parts every walk shares, and
// the walk (fused_walks/) asked for the loops around the element body.
#include "codegen/fused_codegen.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "codegen/expressions.hpp"
#include "codegen/fused_kernel.hpp"
#include "codegen/source_writer.hpp"
#include "compile/runtime_source.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {
namespace {

const char* access_name(Access a) {
  switch (a) {
    case Access::flat:
      return "flat";
    case Access::scalar:
      return "scalar";
    case Access::contiguous:
      return "contig";
    case Access::broadcast:
      return "bcast";
    case Access::tiled:
      return "tile";
    default:
      return "strided";
  }
}

// The block of Philox values a thread drew last for a random op (nf_philox.h).
std::string memo_type(const Node& n) {
  return n.dtype == f64 ? "nf_rand_memo_f64" : "nf_rand_memo_f32";
}

}  // namespace

FusedKernel::FusedKernel(const FusedSpec& spec)
    : s_(spec),
      p_(*spec.program),
      step_(*spec.step),
      walk_(*spec.walk),
      rank_(int(spec.collapsed ? spec.walk_dims.size() : step_.domain.size())),
      coords_(walk_.coordinates()) {}

GeneratedKernel FusedKernel::run(bool with_source) {
  name_values();
  k_.signature = signature();
  k_.name = kernel_name("fused", k_.signature);
  // One loop trip per thread: a grid that covers the domain outran
  // grid-stride loops over a few blocks per multiprocessor (bench/RESULTS.md).
  const std::int64_t per_block = std::int64_t(k_.threads) * s_.vector_width * s_.unroll;
  k_.blocks = std::clamp<std::int64_t>((numel(step_.domain) + per_block - 1) / per_block, 1,
                                       std::numeric_limits<int>::max());
  const std::string text = kernel_text();  // also lists the parameters
  if (with_source) k_.source = std::string(runtime_prelude()) + "\n" + text;
  return std::move(k_);
}

// Canonical names: aJ for the J-th array read, tK for the K-th computed
// value, sM for scalar parameters; equal steps give byte-equal source.
void FusedKernel::name_values() {
  // std::strings first: GCC 12 takes "a" + std::to_string(j) and the like
  // here and where the names are written for an overlapping copy
  // (-Wrestrict, a false positive).
  for (std::size_t j = 0; j < step_.reads.size(); ++j) {
    names_[step_.reads[j]] = std::string("a") + std::to_string(j);
  }
  int t = 0;
  for (int i : step_.nodes) {
    if (names_.count(i)) continue;
    names_[i] = std::string("t") + std::to_string(t++);
    const Node& n = node(i);
    if (op_kind(n.op) == OpKind::constant) {
      scalars_[i] = std::string("s") + std::to_string(scalar_count_++);
    } else if (op_kind(n.op) == OpKind::random) {
      scalars_[i] = std::to_string(random_count_++);
    }
  }
}

std::string FusedKernel::signature() const {
  std::string sig = "fused;idx" + std::string(s_.index64 ? "64" : "32") + ";rank" +
                    std::to_string(rank_) + ";vec" + std::to_string(s_.vector_width) + "x" +
                    std::to_string(s_.unroll) + collapse_name() + ";in";
  for (const auto& o : s_.reads)
    sig += std::string(":") + std::string(name(o.dtype)) + "/" + access_name(o.access);
  sig += ";out";
  for (const auto& o : s_.writes)
    sig += std::string(":") + std::string(name(o.dtype)) + "/" + access_name(o.access);
  for (int i : step_.nodes) {
    if (names_.at(i)[0] == 'a') continue;
    const Node& n = node(i);
    sig += ";" + names_.at(i) + "=" + std::string(op_name(n.op)) + "." + std::string(name(n.dtype));
    for (int in : p_.inputs[i]) sig += "," + names_.at(in);
    sig += code_attributes(n);
  }
  sig += ";write";
  for (int w : step_.writes) sig += ":" + names_.at(w);
  return sig;
}

// How a walk over the collapsed dims takes them: tiles of a dim and the last,
// vectors that may cross the last dim's end, or whole vectors along it.
std::string FusedKernel::collapse_name() const {
  if (!s_.collapsed) return "";
  if (s_.tile_dim >= 0) {
    std::string name = ";tiles" + std::to_string(s_.tile_dim) + ":";
    name += std::to_string(s_.tile_edge) + "x" + std::to_string(s_.tile_length);
    if (s_.tile_pairs) name += ":pairs";
    return name;
  }
  if (s_.walk_wraps) return ";wrapping";
  return s_.panels ? ";collapsed:panels" : ";collapsed";
}

// One statement per computed value.
std::string FusedKernel::value_expr(int i) const {
  std::vector<std::string> in;
  for (int j : p_.inputs[i]) in.push_back(names_.at(j));
  const auto param = scalars_.find(i);
  return node_expr(node(i), in, param == scalars_.end() ? "" : param->second, "i");
}

// The per-element function: the readable heart of the kernel.
void FusedKernel::element_function(SourceWriter& w) const {
  w.raw("// One element: the fused expression, one op per line.\n");
  std::string f = "__device__ __forceinline__ void nf_element(const nf_idx i";
  if (coords_) {
    for (int d = 0; d < rank_; ++d) f += ", const nf_idx c" + std::to_string(d);
  }
  for (std::size_t j = 0; j < step_.reads.size(); ++j) {
    f += ",\n    const " + std::string(compute_ctype(node(step_.reads[j]).dtype)) + " a" +
         std::to_string(j);
  }
  f += scalar_params(",\n    ");
  for (std::size_t j = 0; j < step_.writes.size(); ++j) {
    f += ",\n    " + std::string(compute_ctype(node(step_.writes[j]).dtype)) + "& r" +
         std::to_string(j);
  }
  w.open(f + ")");
  if (!coords_) w.line("(void)i;");
  for (int i : step_.nodes) {
    if (names_.at(i)[0] == 'a') continue;
    w.line("const " + std::string(compute_ctype(node(i).dtype)) + " " + names_.at(i) + " = " +
           value_expr(i) + ";");
  }
  for (std::size_t j = 0; j < step_.writes.size(); ++j) {
    w.line(std::string("r") + std::to_string(j) + " = " + names_.at(step_.writes[j]) + ";");
  }
  w.close();
}

// Scalar and random parameters as declared (prefix before each).
std::string FusedKernel::scalar_params(const std::string& sep) const {
  std::string out;
  for (const auto& [i, name] : scalars_) {
    const Node& n = node(i);
    if (op_kind(n.op) == OpKind::constant) {
      out += sep + "const " + std::string(compute_ctype(n.dtype)) + " " + name;
    } else {
      out += sep + "const unsigned long long seed" + name + sep +
             "const unsigned long long stream" + name + sep + memo_type(n) + "& rng" + name;
    }
  }
  return out;
}

std::string FusedKernel::scalar_args() const {
  std::string out;
  for (const auto& [i, name] : scalars_) {
    if (op_kind(node(i).op) == OpKind::constant) {
      out += ", " + name;
    } else {
      out += ", seed" + name + ", stream" + name + ", rng" + name;
    }
  }
  return out;
}

// Parameters: outputs, inputs, scalars, count, then shapes and strides where
// the walk computes coordinates (of the domain or of its collapsed dims);
// each also listed in k_.params.
std::string FusedKernel::parameters() {
  std::string params;
  auto add = [&](const std::string& decl) {
    params += (params.empty() ? "    " : ",\n    ") + decl;
  };
  for (std::size_t j = 0; j < step_.writes.size(); ++j) {
    add(std::string(storage_ctype(s_.writes[j].dtype)) + "* __restrict__ out" + std::to_string(j));
    k_.params.push_back({KernelParam::Kind::output, int(j), s_.writes[j].dtype});
  }
  for (std::size_t j = 0; j < step_.reads.size(); ++j) {
    add("const " + std::string(storage_ctype(s_.reads[j].dtype)) + "* __restrict__ in" +
        std::to_string(j));
    k_.params.push_back({KernelParam::Kind::input, int(j), s_.reads[j].dtype});
  }
  for (const auto& [i, name] : scalars_) {
    const Node& n = node(i);
    if (op_kind(n.op) == OpKind::constant) {
      add("const " + std::string(compute_ctype(n.dtype)) + " " + name);
      k_.params.push_back({KernelParam::Kind::scalar, i, n.dtype});
    } else {
      add("const unsigned long long seed" + name);
      add("const unsigned long long stream" + name);
      k_.params.push_back({KernelParam::Kind::seed, i, u8});
      k_.params.push_back({KernelParam::Kind::stream, i, u8});
    }
  }
  add("const nf_idx n");
  k_.params.push_back({KernelParam::Kind::count, 0, i64});
  if (coords_ || s_.collapsed) {
    // A collapsed walk's dims come with what divides by them (nf_kernel.h).
    const std::string r = "<nf_idx, " + std::to_string(rank_) + ">";
    add(std::string("const ") + (s_.collapsed ? "nf_walk_dims" : "nf_dims") + r + " dom");
    const std::string dims = "nf_dims" + r;
    k_.params.push_back({KernelParam::Kind::dims, 0, i64});
    if (s_.collapsed && s_.tile_dim >= 0) {
      // The grid of tiles: the dims, the tiled two in tiles.
      add("const nf_walk_dims" + r + " tiles");
      k_.params.push_back({KernelParam::Kind::dims, 1, i64});
    }
    for (std::size_t j = 0; j < s_.reads.size(); ++j) {
      if (s_.reads[j].access == Access::flat || s_.reads[j].access == Access::scalar) continue;
      add("const " + dims + " st_in" + std::to_string(j));
      k_.params.push_back({KernelParam::Kind::strides, int(j), i64});
    }
    for (std::size_t j = 0; j < s_.writes.size(); ++j) {
      if (s_.writes[j].access != Access::strided) continue;
      add("const " + dims + " st_out" + std::to_string(j));
      k_.params.push_back({KernelParam::Kind::strides, int(s_.reads.size() + j), i64});
    }
  }
  return params;
}

std::string FusedKernel::offset(const std::string& strides, Access a) const {
  if (a == Access::scalar) return "0";
  if (a == Access::flat) return "i";
  std::string o;
  for (int d = 0; d < rank_; ++d) {
    o += (d ? " + " : "") + std::string("c") + std::to_string(d) + " * " + strides + ".d[" +
         std::to_string(d) + "]";
  }
  return o;
}

std::string FusedKernel::kernel_text() {
  SourceWriter w;
  w.raw("// numfuse fused kernel " + k_.name + "\n// signature: " + k_.signature + "\n//\n");
  std::string comment = walk_.comment(s_);
  for (std::size_t at = 0; at < comment.size();) {
    const std::size_t end = std::min(comment.find('\n', at), comment.size());
    w.raw("// " + comment.substr(at, end - at) + "\n");
    at = end + 1;
  }
  w.raw("typedef " + idx() + " nf_idx;\n\n");
  element_function(w);
  w.line("");
  w.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_.threads) + ") " +
         k_.name + "(\n" + parameters() + ")");
  w.line("nf_wait_for_earlier_kernels();");
  w.line("const nf_idx stride = (nf_idx)gridDim.x * blockDim.x;");
  w.line("const nf_idx first = (nf_idx)blockIdx.x * blockDim.x + threadIdx.x;");
  for (const auto& [i, name] : scalars_) {
    if (op_kind(node(i).op) == OpKind::random) {
      w.line(memo_type(node(i)) + " rng" + name + " = {~0ull};");
    }
  }
  walk_.loop(*this, w);
  w.close();
  return w.text();
}

void FusedKernel::element(SourceWriter& w,
                          const std::function<std::string(std::size_t)>& read) const {
  for (std::size_t j = 0; j < step_.reads.size(); ++j) {
    w.line("const " + std::string(compute_ctype(node(step_.reads[j]).dtype)) + " a" +
           std::to_string(j) + " = " + load_expr(s_.reads[j].dtype, read(j)) + ";");
  }
  for (std::size_t j = 0; j < step_.writes.size(); ++j) {
    w.line(std::string(compute_ctype(node(step_.writes[j]).dtype)) + " r" + std::to_string(j) +
           ";");
  }
  std::string call = "nf_element(i";
  if (coords_)
    for (int d = 0; d < rank_; ++d) call += ", c" + std::to_string(d);
  for (std::size_t j = 0; j < step_.reads.size(); ++j) call += ", a" + std::to_string(j);
  call += scalar_args();
  for (std::size_t j = 0; j < step_.writes.size(); ++j) call += ", r" + std::to_string(j);
  w.line(call + ");");
}

// Loads of every array at element i (or at the coordinates), the call, the stores.
void FusedKernel::element_loop(SourceWriter& w, const std::string& start) const {
  w.open("for (nf_idx i = " + start + "; i < n; i += stride)");
  if (coords_) {
    w.line("nf_idx rest = i;");
    for (int d = rank_ - 1; d > 0; --d) {
      const std::string c = std::string("c") + std::to_string(d);
      w.line("const nf_idx " + c + " = rest % dom.d[" + std::to_string(d) + "];");
      w.line("rest /= dom.d[" + std::to_string(d) + "];");
    }
    w.line("const nf_idx c0 = rest;");
  }
  element(w, [&](std::size_t j) {
    return "in" + std::to_string(j) + "[" +
           offset("st_in" + std::to_string(j), s_.reads[j].access) + "]";
  });
  stores(w);
  w.close();
}

void FusedKernel::stores(SourceWriter& w) const {
  for (std::size_t j = 0; j < step_.writes.size(); ++j) {
    w.line("out" + std::to_string(j) + "[" +
           offset("st_out" + std::to_string(j), s_.writes[j].access) +
           "] = " + store_expr(s_.writes[j].dtype, std::string("r") + std::to_string(j)) + ";");
  }
}

GeneratedKernel describe_fused(const FusedSpec& spec) {
  return FusedKernel(spec).run(false);
}
GeneratedKernel generate_fused(const FusedSpec& spec) {
  return FusedKernel(spec).run(true);
}

}  // namespace nf::jit
