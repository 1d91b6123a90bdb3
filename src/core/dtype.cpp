#include "numfuse/dtype.hpp"

#include "numfuse/errors.hpp"

namespace nf {

std::string_view name(DType t) {
  switch (t) {
    case DType::b8:
      return "bool";
    case DType::u8:
      return "u8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
  }
  throw InternalError("name(DType): unknown dtype");
}

std::size_t itemsize(DType t) {
  switch (t) {
    case DType::b8:
    case DType::u8:
      return 1;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i32:
    case DType::f32:
      return 4;
    case DType::i64:
    case DType::f64:
      return 8;
  }
  throw InternalError("itemsize: unknown dtype");
}

bool is_floating(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}

bool is_integral(DType t) {
  return t == DType::u8 || t == DType::i32 || t == DType::i64;
}

namespace {

// 0 bool, 1 integer, 2 floating: numpy never promotes to a lower kind.
int kind(DType t) {
  return t == bool_ ? 0 : is_integral(t) ? 1 : 2;
}

// The smallest float that holds every value of an integer type (numpy's rule).
DType float_for_int(DType t) {
  return t == u8 ? f16 : f64;
}

int float_rank(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 0;
    case DType::f32:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (kind(a) > kind(b)) std::swap(a, b);  // now kind(a) <= kind(b)
  if (kind(a) == 0) return b;
  if (kind(b) == 1) {
    if (a == u8) return b;
    if (b == u8) return a;
    return i64;  // i32 with i64
  }
  if (kind(a) == 1) {
    const DType needed = float_for_int(a);
    // a half type cannot hold i32/i64; f32 cannot hold i32 exactly either.
    if (needed == f64) return f64;
    return b;  // u8 fits every float
  }
  // Both floating.
  if ((a == f16 && b == bf16) || (a == bf16 && b == f16)) return f32;
  return float_rank(a) >= float_rank(b) ? a : b;
}

bool can_cast_same_kind(DType from, DType to) {
  return kind(from) <= kind(to);
}

}  // namespace nf
