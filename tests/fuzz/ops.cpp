#include "ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace nf::fuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

std::string_view name(Domain d) {
  static constexpr std::string_view names[] = {"any",     "positive", "unit",     "small",
                                               "nonzero", "base",     "exponent", "near_one",
                                               "low",     "high",     "special"};
  return names[int(d)];
}

OperandRule operand_rule(std::string_view op, int i) {
  using D = Domain;
  // Ops not named here (a new row of the table) get leaves of any value.
  static const std::map<std::string_view, std::vector<OperandRule>> rules = {
      {"copy", {{D::any, kInf}}},
      {"negative", {{D::any, kInf}}},
      {"abs", {{D::any, kInf}}},
      {"relu", {{D::any, kInf}}},
      {"square", {{D::any, kInf}}},
      {"exp", {{D::small, 2.5}}},
      {"exp2", {{D::small, 2.5}}},
      {"expm1", {{D::small, 2.5}}},
      {"sinh", {{D::small, 2.5}}},
      {"cosh", {{D::small, 2.5}}},
      {"log", {{D::positive, 0}}},
      {"log2", {{D::positive, 0}}},
      {"log10", {{D::positive, 0}}},
      {"log1p", {{D::positive, 0}}},
      {"sqrt", {{D::positive, 0}}},
      {"rsqrt", {{D::positive, 0}}},
      {"cbrt", {{D::nonzero, 0}}},
      {"reciprocal", {{D::nonzero, 0}}},
      {"sin", {{D::any, 8}}},
      {"cos", {{D::any, 8}}},
      {"tan", {{D::unit, 0}}},
      {"asin", {{D::unit, 0}}},
      {"acos", {{D::unit, 0}}},
      {"atan", {{D::any, kInf}}},
      {"tanh", {{D::any, kInf}}},
      {"sigmoid", {{D::any, kInf}}},
      {"gelu", {{D::any, kInf}}},
      {"gelu_tanh", {{D::any, kInf}}},
      {"softplus", {{D::any, kInf}}},
      {"erf", {{D::any, kInf}}},
      {"isnan", {{D::special, 0}}},
      {"isinf", {{D::special, 0}}},
      {"isfinite", {{D::special, 0}}},
      {"add", {{D::any, kInf}, {D::any, kInf}}},
      {"subtract", {{D::any, kInf}, {D::any, kInf}}},
      {"multiply", {{D::any, kInf}, {D::any, kInf}}},
      {"divide", {{D::any, kInf}, {D::nonzero, 0}}},
      {"remainder", {{D::any, 0}, {D::nonzero, 0}}},
      {"power", {{D::base, 0}, {D::exponent, 0}}},
      {"minimum", {{D::any, kInf}, {D::any, kInf}}},
      {"maximum", {{D::any, kInf}, {D::any, kInf}}},
      {"where", {{D::any, 0}, {D::any, kInf}, {D::any, kInf}}},
      {"clip", {{D::any, kInf}, {D::low, 0}, {D::high, 0}}},
  };
  const auto it = rules.find(op);
  if (it == rules.end()) return {};
  return it->second.at(std::size_t(i));
}

double result_bound(std::string_view op, const std::vector<double>& b) {
  const double m = *std::max_element(b.begin(), b.end());
  static const std::map<std::string_view, double> fixed = {
      {"exp", 13},    {"exp2", 6}, {"expm1", 13},     {"sinh", 7},   {"cosh", 7},
      {"log", 2},     {"log2", 2}, {"log10", 1},      {"log1p", 2},  {"sqrt", 2},
      {"rsqrt", 2},   {"cbrt", 2}, {"reciprocal", 2}, {"sin", 1},    {"cos", 1},
      {"tan", 2},     {"asin", 2}, {"acos", 4},       {"atan", 2},   {"tanh", 1},
      {"sigmoid", 1}, {"erf", 1},  {"atan2", 4},      {"power", 27}, {"sign", 1},
  };
  if (const auto it = fixed.find(op); it != fixed.end()) return it->second;
  if (op == "square") return b[0] * b[0];
  if (op == "multiply") return b[0] * b[1];
  if (op == "add" || op == "subtract") return b[0] + b[1];
  if (op == "divide") return b[0] * 2;
  if (op == "softplus" || op == "gelu" || op == "gelu_tanh") return m + 1;
  return std::max(m, 1.0);
}

}  // namespace nf::fuzz
