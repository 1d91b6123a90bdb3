#include "codegen/fused_codegen.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "codegen/expressions.hpp"
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
    default:
      return "strided";
  }
}

class Generator {
 public:
  explicit Generator(const FusedSpec& spec)
      : s_(spec), p_(*spec.program), step_(*spec.step), rank_(int(step_.domain.size())) {}

  GeneratedKernel run(bool with_source) {
    strided_ = rank_ > 0 && (any_access(Access::strided) || has_iota());
    name_values();
    const bool vec = !strided_ && s_.vector_width > 1 && !any_access(Access::strided);
    vec_ = vec ? s_.vector_width : 1;
    unroll_ = vec ? s_.unroll : 1;
    k_.signature = signature();
    k_.name = kernel_name("fused", k_.signature);
    // One loop trip per thread: a grid that covers the domain outran
    // grid-stride loops over a few blocks per multiprocessor (bench/RESULTS.md).
    const std::int64_t per_block = std::int64_t(k_.threads) * vec_ * unroll_;
    k_.blocks = std::clamp<std::int64_t>((numel(step_.domain) + per_block - 1) / per_block, 1,
                                         std::numeric_limits<int>::max());
    const std::string text = kernel_text();  // also lists the parameters
    if (with_source) k_.source = std::string(runtime_prelude()) + "\n" + text;
    return std::move(k_);
  }

 private:
  bool any_access(Access a) const {
    for (const auto& o : s_.reads)
      if (o.access == a) return true;
    for (const auto& o : s_.writes)
      if (o.access == a) return true;
    return false;
  }
  bool has_iota() const {
    for (int i : step_.nodes)
      if (p_.nodes[i]->op == OpId::iota) return true;
    return false;
  }
  const Node& node(int i) const { return *p_.nodes[i]; }

  // Canonical names: aJ for the J-th array read, tK for the K-th computed
  // value, sM for scalar parameters; equal steps give byte-equal source.
  void name_values() {
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      names_[step_.reads[j]] = "a" + std::to_string(j);
    }
    int t = 0;
    for (int i : step_.nodes) {
      if (names_.count(i)) continue;
      names_[i] = "t" + std::to_string(t++);
      const Node& n = node(i);
      if (op_kind(n.op) == OpKind::constant) {
        scalars_[i] = "s" + std::to_string(scalar_count_++);
      } else if (op_kind(n.op) == OpKind::random) {
        scalars_[i] = std::to_string(random_count_++);
      }
    }
  }

  std::string idx() const { return s_.index64 ? "long long" : "int"; }

  std::string signature() const {
    std::string sig = "fused;idx" + std::string(s_.index64 ? "64" : "32") + ";rank" +
                      std::to_string(rank_) + ";vec" + std::to_string(vec_) + "x" +
                      std::to_string(unroll_) + ";in";
    for (const auto& o : s_.reads)
      sig += std::string(":") + std::string(name(o.dtype)) + "/" + access_name(o.access);
    sig += ";out";
    for (const auto& o : s_.writes)
      sig += std::string(":") + std::string(name(o.dtype)) + "/" + access_name(o.access);
    for (int i : step_.nodes) {
      if (names_.at(i)[0] == 'a') continue;
      const Node& n = node(i);
      sig +=
          ";" + names_.at(i) + "=" + std::string(op_name(n.op)) + "." + std::string(name(n.dtype));
      for (int in : p_.inputs[i]) sig += "," + names_.at(in);
      sig += code_attributes(n);
    }
    sig += ";write";
    for (int w : step_.writes) sig += ":" + names_.at(w);
    return sig;
  }

  // One statement per computed value.
  std::string value_expr(int i) const {
    std::vector<std::string> in;
    for (int j : p_.inputs[i]) in.push_back(names_.at(j));
    const auto param = scalars_.find(i);
    return node_expr(node(i), in, param == scalars_.end() ? "" : param->second, "i");
  }

  // The per-element function: the readable heart of the kernel.
  std::string element_function() const {
    std::string f = "// One element: the fused expression, one op per line.\n";
    f += "__device__ __forceinline__ void nf_element(const nf_idx i";
    if (strided_) {
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
    f += ") {\n";
    if (!strided_ || rank_ == 0) f += "  (void)i;\n";
    for (int i : step_.nodes) {
      if (names_.at(i)[0] == 'a') continue;
      f += "  const " + std::string(compute_ctype(node(i).dtype)) + " " + names_.at(i) + " = " +
           value_expr(i) + ";\n";
    }
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      f += "  r" + std::to_string(j) + " = " + names_.at(step_.writes[j]) + ";\n";
    }
    return f + "}\n";
  }

  // Scalar and random parameters as declared (prefix before each).
  std::string scalar_params(const std::string& sep) const {
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
  // The block of Philox values a thread drew last for a random op (nf_philox.h).
  static std::string memo_type(const Node& n) {
    return n.dtype == f64 ? "nf_rand_memo_f64" : "nf_rand_memo_f32";
  }
  std::string scalar_args() const {
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

  std::string offset(const std::string& strides, Access a) const {
    if (a == Access::scalar) return "0";
    if (a == Access::flat) return "i";
    std::string o;
    for (int d = 0; d < rank_; ++d) {
      o += (d ? " + " : "") + std::string("c") + std::to_string(d) + " * " + strides + ".d[" +
           std::to_string(d) + "]";
    }
    return o;
  }

  std::string kernel_text() {
    std::string src =
        "// numfuse fused kernel " + k_.name + "\n// signature: " + k_.signature + "\n";
    src += "typedef " + idx() + " nf_idx;\n\n";
    src += element_function() + "\n";
    // Parameters: outputs, inputs, scalars, count, then shapes and strides.
    std::string params;
    auto add = [&](const std::string& decl) {
      params += (params.empty() ? "    " : ",\n    ") + decl;
    };
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      add(std::string(storage_ctype(s_.writes[j].dtype)) + "* __restrict__ out" +
          std::to_string(j));
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
    std::vector<std::pair<std::string, Access>> strided_ops;
    if (strided_) {
      const std::string dims = "nf_dims<nf_idx, " + std::to_string(rank_) + ">";
      add("const " + dims + " dom");
      k_.params.push_back({KernelParam::Kind::dims, 0, i64});
      for (std::size_t j = 0; j < s_.reads.size(); ++j) {
        if (s_.reads[j].access != Access::strided) continue;
        add("const " + dims + " st_in" + std::to_string(j));
        k_.params.push_back({KernelParam::Kind::strides, int(j), i64});
      }
      for (std::size_t j = 0; j < s_.writes.size(); ++j) {
        if (s_.writes[j].access != Access::strided) continue;
        add("const " + dims + " st_out" + std::to_string(j));
        k_.params.push_back({KernelParam::Kind::strides, int(s_.reads.size() + j), i64});
      }
    }
    src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_.threads) + ") " +
           k_.name + "(\n" + params + ") {\n";
    src += "  nf_wait_for_earlier_kernels();\n";
    src += "  const nf_idx stride = (nf_idx)gridDim.x * blockDim.x;\n";
    src += "  const nf_idx first = (nf_idx)blockIdx.x * blockDim.x + threadIdx.x;\n";
    for (const auto& [i, name] : scalars_) {
      if (op_kind(node(i).op) == OpKind::random) {
        src += "  " + memo_type(node(i)) + " rng" + name + " = {~0ull};\n";
      }
    }
    if (vec_ > 1) src += vector_loop();
    src += element_loop(vec_ > 1 ? "n / " + std::to_string(vec_) + " * " + std::to_string(vec_) +
                                       " + first"
                                 : "first");
    return src + "}\n";
  }

  // Loads of every array at element i (or at the coordinates), the call, the stores.
  std::string element_body(const std::string& indent) const {
    std::string b;
    if (strided_) {
      b += indent + "nf_idx rest = i;\n";
      for (int d = rank_ - 1; d > 0; --d) {
        const std::string c = "c" + std::to_string(d);
        b += indent + "const nf_idx " + c + " = rest % dom.d[" + std::to_string(d) + "];\n";
        b += indent + "rest /= dom.d[" + std::to_string(d) + "];\n";
      }
      b += indent + "const nf_idx c0 = rest;\n";
    }
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      const std::string ref = "in" + std::to_string(j) + "[" +
                              offset("st_in" + std::to_string(j), s_.reads[j].access) + "]";
      b += indent + "const " + compute_ctype(node(step_.reads[j]).dtype) + " a" +
           std::to_string(j) + " = " + load_expr(s_.reads[j].dtype, ref) + ";\n";
    }
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      b += indent + compute_ctype(node(step_.writes[j]).dtype) + " r" + std::to_string(j) + ";\n";
    }
    b += indent + "nf_element(i";
    if (strided_)
      for (int d = 0; d < rank_; ++d) b += ", c" + std::to_string(d);
    for (std::size_t j = 0; j < step_.reads.size(); ++j) b += ", a" + std::to_string(j);
    b += scalar_args();
    for (std::size_t j = 0; j < step_.writes.size(); ++j) b += ", r" + std::to_string(j);
    b += ");\n";
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      b += indent + "out" + std::to_string(j) + "[" +
           offset("st_out" + std::to_string(j), s_.writes[j].access) +
           "] = " + store_expr(s_.writes[j].dtype, "r" + std::to_string(j)) + ";\n";
    }
    return b;
  }

  std::string element_loop(const std::string& start) const {
    return "  for (nf_idx i = " + start + "; i < n; i += stride) {\n" + element_body("    ") +
           "  }\n";
  }

  // The flat fast path: each thread moves `unroll_` groups of `vec_` elements
  // of every array, each group with one vector load or store (16 bytes for the
  // widest dtype); all groups are loaded before any is computed.
  std::string vector_loop() const {
    const std::string w = std::to_string(vec_), u = std::to_string(unroll_);
    std::string b = "  const nf_idx groups = n / " + w + ";\n";
    b += "  for (nf_idx g0 = (nf_idx)blockIdx.x * blockDim.x * " + u +
         " + threadIdx.x; g0 < groups;\n       g0 += (nf_idx)gridDim.x * blockDim.x * " + u +
         ") {\n";
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      if (s_.reads[j].access == Access::scalar) continue;
      const std::string t = storage_ctype(s_.reads[j].dtype), J = std::to_string(j);
      b += "    nf_vec<" + t + ", " + w + "> v_in" + J + "[" + u + "] = {};\n";
    }
    b += "#pragma unroll\n    for (int u = 0; u < " + u + "; ++u) {\n";
    b += "      const nf_idx g = g0 + (nf_idx)u * blockDim.x;\n      if (g < groups) {\n";
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      if (s_.reads[j].access == Access::scalar) continue;
      const std::string t = storage_ctype(s_.reads[j].dtype), J = std::to_string(j);
      b += "        v_in" + J + "[u] = *(const nf_vec<" + t + ", " + w + ">*)(in" + J + " + g * " +
           w + ");\n";
    }
    b += "      }\n    }\n";
    // Groups past the end compute on zeros and store nothing: no branch
    // separates the loads from the arithmetic.
    b += "#pragma unroll\n    for (int u = 0; u < " + u + "; ++u) {\n";
    b += "      const nf_idx g = g0 + (nf_idx)u * blockDim.x;\n";
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      const std::string t = storage_ctype(s_.writes[j].dtype);
      b += "      nf_vec<" + t + ", " + w + "> v_out" + std::to_string(j) + ";\n";
    }
    b += "#pragma unroll\n      for (int k = 0; k < " + w + "; ++k) {\n";
    b += "        const nf_idx i = g * " + w + " + k;\n";
    for (std::size_t j = 0; j < step_.reads.size(); ++j) {
      const std::string J = std::to_string(j);
      const std::string ref =
          s_.reads[j].access == Access::scalar ? "in" + J + "[0]" : "v_in" + J + "[u].v[k]";
      b += "        const " + std::string(compute_ctype(node(step_.reads[j]).dtype)) + " a" + J +
           " = " + load_expr(s_.reads[j].dtype, ref) + ";\n";
    }
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      b += "        " + std::string(compute_ctype(node(step_.writes[j]).dtype)) + " r" +
           std::to_string(j) + ";\n";
    }
    b += "        nf_element(i";
    for (std::size_t j = 0; j < step_.reads.size(); ++j) b += ", a" + std::to_string(j);
    b += scalar_args();
    for (std::size_t j = 0; j < step_.writes.size(); ++j) b += ", r" + std::to_string(j);
    b += ");\n";
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      const std::string J = std::to_string(j);
      b += "        v_out" + J + ".v[k] = " + store_expr(s_.writes[j].dtype, "r" + J) + ";\n";
    }
    b += "      }\n";
    for (std::size_t j = 0; j < step_.writes.size(); ++j) {
      const std::string t = storage_ctype(s_.writes[j].dtype), J = std::to_string(j);
      b += "      if (g < groups) *(nf_vec<" + t + ", " + w + ">*)(out" + J + " + g * " + w +
           ") = v_out" + J + ";\n";
    }
    return b + "    }\n  }\n";
  }

  const FusedSpec& s_;
  const Program& p_;
  const Step& step_;
  const int rank_;
  bool strided_ = false;  // whether the kernel computes coordinates
  int vec_ = 1;
  int unroll_ = 1;
  int scalar_count_ = 0, random_count_ = 0;
  GeneratedKernel k_;
  std::map<int, std::string> names_;
  std::map<int, std::string> scalars_;
};

}  // namespace

GeneratedKernel describe_fused(const FusedSpec& spec) {
  return Generator(spec).run(false);
}
GeneratedKernel generate_fused(const FusedSpec& spec) {
  return Generator(spec).run(true);
}

}  // namespace nf::jit
