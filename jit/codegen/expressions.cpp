#include "codegen/expressions.hpp"

#include "numfuse/errors.hpp"

namespace nf::jit {
namespace {

// The device function of every elementwise op, from the op table.
const char* device_function(OpId op) {
  switch (op) {
#define NF_ELEMENTWISE(name, arity, rule, accepts, fn) \
  case OpId::name:                                     \
    return #fn;
#include "graph/ops.def"
    default:
      throw InternalError("codegen: no device function for " + std::string(op_name(op)));
  }
}

// numpy's astype: convert, then round through a half type's storage.
std::string cast_expr(DType to, const std::string& value) {
  const std::string c = std::string("nf_convert<") + compute_ctype(to) + ">(" + value + ")";
  if (to == f16) return "nf_f16_bits_to_f32(nf_f32_to_f16_bits(" + c + "))";
  if (to == bf16) return "nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(" + c + "))";
  return c;
}

}  // namespace

const char* compute_ctype(DType t) {
  switch (t) {
    case DType::b8:
      return "nf_b8";
    case DType::u8:
      return "nf_u8";
    case DType::i32:
      return "nf_i32";
    case DType::i64:
      return "nf_i64";
    case DType::f64:
      return "nf_f64";
    default:
      return "nf_f32";
  }
}

const char* storage_ctype(DType t) {
  switch (t) {
    case DType::b8:
      return "unsigned char";
    case DType::f16:
    case DType::bf16:
      return "unsigned short";
    default:
      return compute_ctype(t);
  }
}

std::string vector_ctype(DType t, int width) {
  return "nf_vec<" + std::string(storage_ctype(t)) + ", " + std::to_string(width) + ">";
}

std::string load_expr(DType t, const std::string& ref) {
  switch (t) {
    case DType::b8:
      return "(" + ref + " != 0)";
    case DType::f16:
      return "nf_f16_bits_to_f32(" + ref + ")";
    case DType::bf16:
      return "nf_bf16_bits_to_f32(" + ref + ")";
    default:
      return ref;
  }
}

std::string store_expr(DType t, const std::string& value) {
  switch (t) {
    case DType::b8:
      return "(unsigned char)" + value;
    case DType::f16:
      return "nf_f32_to_f16_bits(" + value + ")";
    case DType::bf16:
      return "nf_f32_to_bf16_bits(" + value + ")";
    default:
      return value;
  }
}

std::string node_expr(const Node& n, const std::vector<std::string>& in, const std::string& param,
                      const std::string& index) {
  switch (op_kind(n.op)) {
    case OpKind::constant:
      return param;
    case OpKind::cast:
      return cast_expr(n.dtype, in[0]);
    case OpKind::view:
      return in[0];  // broadcast: the same value at every coordinate
    case OpKind::iota:
      return std::string("nf_convert<") + compute_ctype(n.dtype) + ">(c" + std::to_string(n.axis) +
             ")";
    case OpKind::random: {
      const bool normal = n.op == OpId::rand_normal;
      const bool wide = n.dtype == f64;
      const std::string fn =
          std::string("nf_rand_") + (normal ? "normal" : "uniform") + (wide ? "_f64" : "_f32");
      return fn + "(rng" + param + ", seed" + param + ", stream" + param +
             ", (unsigned long long)" + index + ")";
    }
    case OpKind::elementwise: {
      std::string e = std::string(device_function(n.op)) + "(";
      for (std::size_t k = 0; k < in.size(); ++k) e += (k ? ", " : "") + in[k];
      return e + ")";
    }
    default:
      throw InternalError("codegen: op " + std::string(op_name(n.op)) +
                          " is not computed element by element");
  }
}

}  // namespace nf::jit
