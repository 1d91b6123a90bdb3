// Conversions between compute types, the same on host and device: to bool is
// "nonzero"; float to integer truncates, saturates at the type's limits and
// sends NaN to 0 (what CUDA's conversions do); integer to integer wraps.
#pragma once

#include "nf_defs.h"

// Values at or past `below`/`above` saturate to the type's min/max.
template <class To>
struct nf_int_limits;
template <>
struct nf_int_limits<nf_u8> {
  static NF_HD double below() { return 0.0; }
  static NF_HD double above() { return 255.0; }
  static NF_HD nf_u8 min() { return 0; }
  static NF_HD nf_u8 max() { return 255; }
};
template <>
struct nf_int_limits<nf_i32> {
  static NF_HD double below() { return -2147483648.0; }
  static NF_HD double above() { return 2147483647.0; }
  static NF_HD nf_i32 min() { return -2147483647 - 1; }
  static NF_HD nf_i32 max() { return 2147483647; }
};
template <>
struct nf_int_limits<nf_i64> {
  static NF_HD double below() { return -9223372036854775808.0; }
  static NF_HD double above() { return 9223372036854775808.0; }
  static NF_HD nf_i64 min() { return -9223372036854775807LL - 1; }
  static NF_HD nf_i64 max() { return 9223372036854775807LL; }
};

template <class To, class From>
struct nf_converter {
  static NF_HD To run(From x) { return (To)x; }
};
template <class From>
struct nf_converter<nf_b8, From> {
  static NF_HD nf_b8 run(From x) { return x != (From)0; }
};
template <>
struct nf_converter<nf_b8, nf_b8> {
  static NF_HD nf_b8 run(nf_b8 x) { return x; }
};
#define NF_FLOAT_TO_INT(To, From)                                           \
  template <>                                                               \
  struct nf_converter<To, From> {                                           \
    static NF_HD To run(From x) {                                           \
      if (x != x) return (To)0;                                             \
      const double d = (double)x;                                           \
      if (d <= nf_int_limits<To>::below()) return nf_int_limits<To>::min(); \
      if (d >= nf_int_limits<To>::above()) return nf_int_limits<To>::max(); \
      return (To)x;                                                         \
    }                                                                       \
  };
NF_FLOAT_TO_INT(nf_u8, nf_f32)
NF_FLOAT_TO_INT(nf_u8, nf_f64)
NF_FLOAT_TO_INT(nf_i32, nf_f32)
NF_FLOAT_TO_INT(nf_i32, nf_f64)
NF_FLOAT_TO_INT(nf_i64, nf_f32)
NF_FLOAT_TO_INT(nf_i64, nf_f64)
#undef NF_FLOAT_TO_INT

template <class To, class From>
NF_HD To nf_convert(From x) {
  return nf_converter<To, From>::run(x);
}
