#include "cpu/convert.hpp"

#include <cstdint>
#include <string>

#include "numfuse/errors.hpp"

#include "runtime/nf_cast.h"
#include "runtime/nf_half.h"

namespace nf::cpu {
namespace {

// How each dtype is stored, and the compute type it loads into.
template <class S, class C>
struct Plain {
  using Stored = S;
  using Compute = C;
  static C load(S s) { return nf_convert<C>(s); }
  static S save(C c) { return nf_convert<S>(c); }
};
struct F16 {
  using Stored = std::uint16_t;
  using Compute = nf_f32;
  static nf_f32 load(Stored s) { return nf_f16_bits_to_f32(s); }
  static Stored save(nf_f32 c) { return nf_f32_to_f16_bits(c); }
};
struct BF16 {
  using Stored = std::uint16_t;
  using Compute = nf_f32;
  static nf_f32 load(Stored s) { return nf_bf16_bits_to_f32(s); }
  static Stored save(nf_f32 c) { return nf_f32_to_bf16_bits(c); }
};
struct Bool {
  using Stored = std::uint8_t;
  using Compute = nf_b8;
  static nf_b8 load(Stored s) { return s != 0; }
  static Stored save(nf_b8 c) { return c ? 1 : 0; }
};

template <class F>
decltype(auto) visit_storage(DType t, F&& f) {
  switch (t) {
    case DType::b8:
      return f(Bool{});
    case DType::u8:
      return f(Plain<nf_u8, nf_u8>{});
    case DType::i32:
      return f(Plain<nf_i32, nf_i32>{});
    case DType::i64:
      return f(Plain<nf_i64, nf_i64>{});
    case DType::f16:
      return f(F16{});
    case DType::bf16:
      return f(BF16{});
    case DType::f32:
      return f(Plain<nf_f32, nf_f32>{});
    default:
      return f(Plain<nf_f64, nf_f64>{});
  }
}

}  // namespace

Value load(const Array& a) {
  if (a.device() != Device::cpu()) {
    throw ValueError("an array on " + to_string(a.device()) +
                     " was used in a statement running on the CPU (numfuse moves no array "
                     "between devices by itself)");
  }
  Value out = make_value(compute_type(a.dtype()), a.shape());
  visit_storage(a.dtype(), [&](auto fmt) {
    using Fmt = decltype(fmt);
    using S = typename Fmt::Stored;
    const S* src = static_cast<const S*>(a.storage()->data) + a.offset();
    visit_ctype(out.ctype, [&](auto tag) {
      using C = decltype(tag);
      C* dst = out.data<C>();
      for_each_row<1>(a.shape(), {&a.strides()},
                      [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
                        const S* row = src + off[0];
                        C* out_row = dst + first;
                        along_row(n, step[0], [&](std::int64_t i, std::int64_t at) {
                          out_row[i] = nf_convert<C>(Fmt::load(row[at]));
                        });
                      });
    });
  });
  return out;
}

Value view_or_load(const Array& a) {
  if (a.device() != Device::cpu() || a.dtype() != compute_type(a.dtype())) return load(a);
  return Value{a.dtype(), a.shape(), a.strides(), a.offset(), a.storage()};
}

void store(const Value& v, const Array& dst) {
  visit_storage(dst.dtype(), [&](auto fmt) {
    using Fmt = decltype(fmt);
    using S = typename Fmt::Stored;
    using N = typename Fmt::Compute;
    S* out = static_cast<S*>(dst.storage()->data) + dst.offset();
    visit_ctype(v.ctype, [&](auto tag) {
      using C = decltype(tag);
      const C* src = v.data<C>();
      for_each_row<2>(dst.shape(), {&dst.strides(), &v.strides},
                      [&](std::int64_t, const auto& off, const auto& step, std::int64_t n) {
                        S* out_row = out + off[0];
                        const C* row = src + off[1];
                        along_row(n, step[0], step[1],
                                  [&](std::int64_t, std::int64_t to, std::int64_t from) {
                                    out_row[to] = Fmt::save(nf_convert<N>(row[from]));
                                  });
                      });
    });
  });
}

Value cast(const Value& v, DType to) {
  Value out = make_value(compute_type(to), v.shape);
  visit_storage(to, [&](auto fmt) {
    using Fmt = decltype(fmt);
    using N = typename Fmt::Compute;
    visit_ctype(v.ctype, [&](auto from_tag) {
      using From = decltype(from_tag);
      visit_ctype(out.ctype, [&](auto to_tag) {
        using To = decltype(to_tag);
        const From* src = v.data<From>();
        To* dst = out.data<To>();
        for_each_row<1>(v.shape, {&v.strides},
                        [&](std::int64_t first, const auto& off, const auto& step, std::int64_t n) {
                          const From* row = src + off[0];
                          To* out_row = dst + first;
                          along_row(n, step[0], [&](std::int64_t i, std::int64_t at) {
                            // Round through the stored dtype: astype(f16) loses
                            // what f16 cannot hold even though f16 computes in f32.
                            const N stored = nf_convert<N>(row[at]);
                            out_row[i] = nf_convert<To>(Fmt::load(Fmt::save(stored)));
                          });
                        });
      });
    });
  });
  return out;
}

Value constant(const ConstantValue& v, DType t) {
  Value src = make_value(is_floating(t) ? f64 : i64, {});
  if (is_floating(t)) {
    *src.data<nf_f64>() = v.f;
  } else {
    *src.data<nf_i64>() = v.i;
  }
  return cast(src, t);
}

}  // namespace nf::cpu
