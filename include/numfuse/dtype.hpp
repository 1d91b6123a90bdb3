// Element types. f16 and bf16 are storage types: kernels compute them in f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace nf {

enum class DType : std::uint8_t { b8, u8, i32, i64, f16, bf16, f32, f64 };

inline constexpr DType bool_ = DType::b8;
inline constexpr DType u8 = DType::u8;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;

inline constexpr DType all_dtypes[] = {bool_, u8, i32, i64, f16, bf16, f32, f64};

// The dtype that creation functions use for floating values, as in PyTorch,
// JAX and ArrayFire (numpy's is f64).
inline constexpr DType default_float = f32;

std::string_view name(DType t);
std::size_t itemsize(DType t);
bool is_floating(DType t);
bool is_integral(DType t);  // u8 i32 i64 (not bool)

// NumPy 2 promotion of two array dtypes (bf16 promotes like f16; f16 with bf16
// gives f32).
DType promote_types(DType a, DType b);

// Whether numpy's "same_kind" casting allows a -> b (what `a += x` needs).
bool can_cast_same_kind(DType from, DType to);

// The dtype of a C++ element type used with from_vector/to_vector/item.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return bool_;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return u8;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return i32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return i64;
  else if constexpr (std::is_same_v<T, float>)
    return f32;
  else if constexpr (std::is_same_v<T, double>)
    return f64;
  else
    static_assert(!sizeof(T),
                  "numfuse: element type must be bool, uint8_t, int32_t, int64_t, float or double");
}

}  // namespace nf
