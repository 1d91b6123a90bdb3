// numpy's array repr (numpy/_core/arrayprint.py: array_repr, _formatArray and
// the Bool/Integer/FloatingFormat classes) under numpy's default print
// options, with numfuse's dtype name and the device in the suffix.
#include "numfuse/print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/nf_half.h"

namespace nf {
namespace {

// numpy's default print options.
constexpr int kPrecision = 8;              // most fractional digits of a float
constexpr std::int64_t kThreshold = 1000;  // larger arrays are summarised
constexpr std::int64_t kEdgeItems = 3;     // entries kept at each end of a summarised axis
constexpr std::size_t kLineWidth = 75;
constexpr std::string_view kPrefix = "array(";

// ---- which elements are printed ---------------------------------------------

// An axis that a summary shortens to its first and last kEdgeItems entries.
bool is_long(std::int64_t n) {
  return n > 2 * kEdgeItems;
}

template <class T>
void append_all(const Array& a, std::vector<T>& out) {
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(a.size()));
  a.read_into(out.data() + at, dtype_of<T>());
}

// Appends, in C order, the elements a summary of `a` shows (numpy's
// _leading_trailing), reading only those from the device: a GPU array too
// large to print whole may be too large to copy whole.
template <class T>
void append_edges(const Array& a, std::vector<T>& out) {
  if (std::none_of(a.shape().begin(), a.shape().end(), is_long)) {
    append_all(a, out);
    return;
  }
  const std::int64_t n = a.shape()[0];
  if (is_long(n)) {
    append_edges(a(slice(0, kEdgeItems)), out);
    append_edges(a(slice(n - kEdgeItems, n)), out);
  } else {
    for (std::int64_t i = 0; i < n; ++i) append_edges(a(i), out);
  }
}

template <class T>
std::vector<T> printed_elements(const Array& a, bool summarise) {
  std::vector<T> out;
  if (summarise) {
    append_edges(a, out);
  } else {
    append_all(a, out);
  }
  return out;
}

// ---- element text -------------------------------------------------------------

void right_align(std::vector<std::string>& words) {
  std::size_t width = 0;
  for (const std::string& w : words) width = std::max(width, w.size());
  for (std::string& w : words) w.insert(0, width - w.size(), ' ');
}

std::vector<std::string> bool_words(const std::vector<std::int64_t>& values, bool zero_d) {
  // numpy pads True to the width of False, except in a 0-d array.
  const char* true_word = zero_d ? "True" : " True";
  std::vector<std::string> words;
  for (std::int64_t v : values) words.emplace_back(v ? true_word : "False");
  return words;
}

std::vector<std::string> integer_words(const std::vector<std::int64_t>& values) {
  std::vector<std::string> words;
  for (std::int64_t v : values) words.push_back(std::to_string(v));
  right_align(words);
  return words;
}

// x rounded to the nearest value of the floating dtype t.
double round_to(double x, DType t) {
  switch (t) {
    case DType::f16:
      return nf_f16_bits_to_f32(nf_f32_to_f16_bits(static_cast<float>(x)));
    case DType::bf16:
      return nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(static_cast<float>(x)));
    case DType::f32:
      return static_cast<float>(x);
    default:
      return x;
  }
}

// Whether `text` (fmt's output, so locale-free) reads back as x in dtype t.
// f16 and bf16 read it as a float first: an exhaustive comparison with exact
// rounding found that this never changes which digits read back.
bool reads_back(const std::string& text, double x, DType t) {
  const char* end = text.data() + text.size();
  if (t == DType::f64) {
    double y = 0;
    std::from_chars(text.data(), end, y);
    return y == x;
  }
  float y = 0;
  std::from_chars(text.data(), end, y);
  return round_to(y, t) == x;
}

// The shortest decimal form of a finite x that reads back as x in its dtype,
// as numpy's Dragon4 prints in unique mode: `digits` significant digits, the
// first at 10^exponent. It is found as the fewest digits whose correctly
// rounded form reads back; that form is also the closest to x, as Dragon4's
// is. fmt's own shortest form ("{}") would serve f32 and f64, but fmt has
// none for f16 and bf16, which numpy prints by their own precision.
struct Shortest {
  int digits;
  int exponent;
};

Shortest shortest(double x, DType t) {
  for (int digits = 1;; ++digits) {
    const std::string text = fmt::format("{:.{}e}", x, digits - 1);
    if (reads_back(text, x, t)) return {digits, std::stoi(text.substr(text.find('e') + 1))};
  }
}

// numpy prints every float of an array in scientific notation where fixed
// notation would take more than 8 integer digits, or lose the smallest values'
// digits, or span more than three decades. The comparisons run in the
// array's dtype, as numpy 2's do (a float32 1e-4 is not below 1e-4 there).
bool needs_scientific(const std::vector<double>& values, DType t) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  for (double x : values) {
    if (std::isfinite(x) && x != 0) {
      lo = std::min(lo, std::abs(x));
      hi = std::max(hi, std::abs(x));
    }
  }
  if (hi == 0) return false;
  return hi >= round_to(1e8, t) || lo < round_to(1e-4, t) || round_to(hi / lo, t) > 1e3;
}

// A finite float's text in parts, so that an array's floats can share one
// layout: the integer part with its sign, the fractional digits and, in
// scientific notation, the exponent's sign and digits.
struct FloatParts {
  std::string integer;
  std::string fraction;
  char exponent_sign = 0;
  std::string exponent;
};

// x with its shortest digits, or rounded to kPrecision fractional digits
// where those are more (numpy's 'maxprec' float mode).
FloatParts float_parts(double x, DType t, bool scientific) {
  const Shortest s = shortest(x, t);
  const int needed = scientific ? s.digits - 1 : std::max(0, s.digits - 1 - s.exponent);
  const int precision = std::min(needed, kPrecision);
  std::string text =
      scientific ? fmt::format("{:#.{}e}", x, precision) : fmt::format("{:#.{}f}", x, precision);
  FloatParts parts;
  const std::size_t e = text.find('e');
  if (e != std::string::npos) {
    parts.exponent_sign = text[e + 1];
    parts.exponent = text.substr(e + 2);
    text.resize(e);
  }
  const std::size_t point = text.find('.');
  parts.integer = text.substr(0, point);
  parts.fraction = text.substr(point + 1);
  // Rounding to kPrecision digits can leave zeros that numpy trims.
  while (!parts.fraction.empty() && parts.fraction.back() == '0') parts.fraction.pop_back();
  return parts;
}

// The widest of each part over an array's finite floats.
struct FloatWidths {
  std::size_t integer = 0;
  std::size_t fraction = 0;
  std::size_t exponent = 0;
};

FloatWidths widths(const std::vector<FloatParts>& parts) {
  FloatWidths w;
  for (const FloatParts& p : parts) {
    w.integer = std::max(w.integer, p.integer.size());
    w.fraction = std::max(w.fraction, p.fraction.size());
    w.exponent = std::max(w.exponent, p.exponent.size());
  }
  return w;
}

// Integer parts right-aligned. Fixed notation pads fractions with spaces, so
// that each shows its own digits; scientific notation pads mantissas with
// zeros and exponents to a common number of digits, as numpy does.
std::string float_word(const FloatParts& p, const FloatWidths& w) {
  std::string word(w.integer - p.integer.size(), ' ');
  word += p.integer + '.' + p.fraction;
  if (!p.exponent_sign) return word + std::string(w.fraction - p.fraction.size(), ' ');
  word += std::string(w.fraction - p.fraction.size(), '0');
  word += 'e';
  word += p.exponent_sign;
  return word + std::string(w.exponent - p.exponent.size(), '0') + p.exponent;
}

std::string non_finite_word(double x) {
  if (std::isnan(x)) return "nan";
  return x < 0 ? "-inf" : "inf";
}

std::vector<std::string> float_words(const std::vector<double>& values, DType t) {
  const bool scientific = needs_scientific(values, t);
  std::vector<FloatParts> parts;
  for (double x : values) {
    if (std::isfinite(x)) parts.push_back(float_parts(x, t, scientific));
  }
  const FloatWidths w = widths(parts);
  std::vector<std::string> words;
  auto next = parts.begin();
  for (double x : values) {
    words.push_back(std::isfinite(x) ? float_word(*next++, w) : non_finite_word(x));
  }
  // nan and inf may be wider than the finite values: those then move right.
  right_align(words);
  return words;
}

// The printed elements of `a` in C order, each padded to the common width.
std::vector<std::string> element_words(const Array& a, bool summarise) {
  if (is_floating(a.dtype())) return float_words(printed_elements<double>(a, summarise), a.dtype());
  const std::vector<std::int64_t> values = printed_elements<std::int64_t>(a, summarise);
  if (a.dtype() == bool_) return bool_words(values, a.ndim() == 0);
  return integer_words(values);
}

// ---- layout -------------------------------------------------------------------

// Joins a row's entries with ", ", moving to a new line, indented by `indent`,
// each entry that would end past column `width` (numpy's _extendLine). An
// entry that does not fit on a line of its own is not moved.
std::string wrap(const std::vector<std::string>& entries, const std::string& indent,
                 std::size_t width) {
  std::string text;
  std::string line = indent;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (line.size() > indent.size() && line.size() + entries[i].size() > width) {
      line.pop_back();  // the separator's space
      text += line + '\n';
      line = indent;
    }
    line += entries[i];
    if (i + 1 < entries.size()) line += ", ";
  }
  return text + line;
}

// numpy's _formatArray: nested brackets whose contents line up under the
// innermost opening bracket, the innermost rows wrapped at the line width.
class Layout {
 public:
  Layout(const std::vector<std::string>& words, const Shape& shape, bool summarise)
      : words_(words), shape_(shape), summarise_(summarise) {}

  // The sub-array at `axis` that begins with the next word. `indent` is the
  // column of its opening bracket; no line may pass column `width`.
  std::string block(std::size_t axis, const std::string& indent, std::size_t width) {
    const std::string inner =
        axis + 1 == shape_.size() ? row(axis, indent, width) : rows(axis, indent, width);
    return '[' + inner.substr(indent.size()) + ']';
  }

 private:
  bool elides(std::size_t axis) const { return summarise_ && is_long(shape_[axis]); }
  std::int64_t shown(std::size_t axis) const {
    return elides(axis) ? 2 * kEdgeItems : shape_[axis];
  }

  std::string row(std::size_t axis, const std::string& indent, std::size_t width) {
    std::vector<std::string> entries;
    for (std::int64_t i = 0; i < shown(axis); ++i) {
      if (elides(axis) && i == kEdgeItems) entries.emplace_back("...");
      entries.push_back(words_[next_++]);
    }
    // Each entry leaves a column for the "," or "]" after it.
    return wrap(entries, indent, width - 1);
  }

  // Sub-arrays one per line, with a blank line between them for each axis
  // they have beyond one.
  std::string rows(std::size_t axis, const std::string& indent, std::size_t width) {
    const std::string separator = ',' + std::string(shape_.size() - axis - 1, '\n');
    std::string text;
    for (std::int64_t i = 0; i < shown(axis); ++i) {
      if (elides(axis) && i == kEdgeItems) text += indent + "..." + separator;
      text += indent + block(axis + 1, indent + ' ', width - 1);
      if (i + 1 < shown(axis)) text += separator;
    }
    return text;
  }

  const std::vector<std::string>& words_;
  const Shape& shape_;
  bool summarise_;
  std::size_t next_ = 0;
};

// What array( ... ) holds: the nested lists, or a 0-d array's one element.
std::string body(const Array& a) {
  if (a.size() == 0) return "[]";
  const bool summarise = a.size() > kThreshold;
  const std::vector<std::string> words = element_words(a, summarise);
  if (a.ndim() == 0) return words[0];
  // The lines leave a column for the ")" that ends the repr, as numpy's do.
  const std::string indent(kPrefix.size() + 1, ' ');
  return Layout(words, a.shape(), summarise).block(0, indent, kLineWidth - 1);
}

// The shape is shown where "[]" does not imply it, as numpy shows it.
std::string suffix(const Array& a) {
  std::string text;
  if (a.size() == 0 && a.ndim() != 1) text += "shape=" + to_string(a.shape()) + ", ";
  text += "dtype=" + std::string(name(a.dtype()));
  return text + ", device=" + to_string(a.device()) + ')';
}

}  // namespace

std::string to_string(const Array& a) {
  const std::string text = std::string(kPrefix) + body(a) + ',';
  const std::string extras = suffix(a);
  const std::size_t newline = text.rfind('\n');
  const std::size_t last_line =
      newline == std::string::npos ? text.size() : text.size() - newline - 1;
  // A suffix that would pass the line width goes on a line of its own,
  // aligned with the opening bracket.
  const bool fits = last_line + 1 + extras.size() <= kLineWidth;
  return text + (fits ? " " : '\n' + std::string(kPrefix.size(), ' ')) + extras;
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  return os << to_string(a);
}

}  // namespace nf
