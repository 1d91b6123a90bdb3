// Independent references for the op tests. dtype rules, rounding, wraparound
// and broadcasting are written out here from numpy's documented behaviour, not
// taken from numfuse, so a wrong rule in the library cannot also be the
// expectation. Reference values are computed in double (or exactly, in int64)
// by plain loops in the test files.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace nftest {

// ---- dtypes -----------------------------------------------------------------

std::string dname(nf::DType t);
bool is_float(nf::DType t);
// NumPy 2 promotion of two array dtypes; bf16 promotes like f16, f16 with
// bf16 gives f32.
nf::DType promote(nf::DType a, nf::DType b);
nf::DType promote(const std::vector<nf::DType>& ts);
// numpy's float for a dtype: floats stay, u8/bool -> f16, i32/i64 -> f64.
nf::DType float_of(nf::DType t);

// The nearest value of float dtype `t` (ties to even, overflow to inf);
// values of other dtypes are returned unchanged.
double round_to(nf::DType t, double v);
// Two's complement wraparound to an integer dtype; bool: v != 0.
std::int64_t wrap_to(nf::DType t, std::int64_t v);
std::int64_t add_w(std::int64_t a, std::int64_t b);
std::int64_t sub_w(std::int64_t a, std::int64_t b);
std::int64_t mul_w(std::int64_t a, std::int64_t b);

// ---- shapes -----------------------------------------------------------------

std::string shape_str(const nf::Shape& s);
std::int64_t count(const nf::Shape& s);
// numpy broadcasting; throws std::invalid_argument when shapes do not broadcast.
nf::Shape broadcast(const std::vector<nf::Shape>& shapes);
// For each element of `out` in C order, the C-order index of the element of an
// array of shape `in` that broadcasting reads.
std::vector<std::int64_t> broadcast_map(const nf::Shape& in, const nf::Shape& out);

// ---- random inputs ------------------------------------------------------------

struct Domain {
  double lo = -4, hi = 4;                // floating inputs: uniform on [lo, hi]
  std::int64_t ilo = -1000, ihi = 1000;  // integer inputs, clipped to the dtype
  bool full_ints = false;                // integers over the dtype's whole range
  bool signed_magnitude = false;         // +-[lo, hi] (+-[ilo, ihi]): away from 0
  double half_frac = 0;                  // share of floats rounded to a multiple of 0.5
  double zero_frac = 0;                  // share of exact zeros (bool: share of false)
  bool specials = false;                 // NaN, +-inf and -0 among floats
};

enum class View { plain, transposed, strided, reversed };

// An input of logical shape `shape`, made as the given view of a fresh base.
struct Input {
  nf::Shape shape;
  View view = View::plain;
};

std::string input_str(const Input& in);

// Random values of dtype `t` (never all zero) in a new base array, viewed as
// `in` says. Floats go through nf::array(std::vector<double>).astype(t).
nf::Array random_array(std::mt19937& rng, const Domain& dom, nf::DType t, const Input& in);

// An array's elements in C order, as double and (for integer and bool arrays)
// exactly as int64.
struct Values {
  std::vector<double> d;
  std::vector<std::int64_t> i;
};
Values read_values(const nf::Array& a);

// A deterministic seed from a test's name and numbers.
std::uint32_t seed_of(const std::string& name, std::uint32_t a = 0, std::uint32_t b = 0);

// ---- comparison -----------------------------------------------------------------

struct Tol {
  double rtol, atol;
};
// Per result dtype: f16 and bf16 are computed in f32 and rounded, f32 within a
// few ulp, f64 near its precision.
Tol tol_for(nf::DType result);
// The unit roundoff of the type numfuse computes `result` in (f32 for
// f16/bf16/f32): a reduction over n elements may lose n of these.
double compute_eps(nf::DType result);
// |got - want| <= atol + rtol * max(|want|, scale); NaN matches NaN, an
// infinity only itself.
bool close(double got, double want, Tol tol, double scale = 0);

std::string num(double v);

}  // namespace nftest
