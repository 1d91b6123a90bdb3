#include "statement.hpp"

#include <optional>
#include <sstream>
#include <stdexcept>

namespace nf::fuzz {

std::vector<Array> make_inputs(const Statement& s, Device device) {
  std::vector<Array> out;
  for (const Input& in : s.inputs) {
    // Host values go in as f64 and are cast: each is exact in the dtype.
    const Array host = Array(nf::array(in.values, Shape{std::int64_t(in.values.size())}))
                           .reshape(in.shape)
                           .astype(in.dtype);
    out.push_back(device == Device::cpu() ? host : host.to(device));
  }
  return out;
}

Array apply(const View& v, const Array& a) {
  Array x = a;
  if (!v.slices.empty()) {
    std::vector<Index> idx;
    for (const SliceSpec& s : v.slices) idx.emplace_back(nf::slice(s.start, s.stop, s.step));
    x = x.index(idx);
  }
  if (v.T) return x.T();
  if (!v.perm.empty()) return x.transpose(v.perm);
  return x;
}

namespace {

Expr make_term(const Term& t, const std::vector<Expr>& args, const std::vector<Array>& inputs) {
  switch (t.kind) {
    case Term::Kind::leaf:
      return Expr(apply(t.view, inputs.at(std::size_t(t.input))));
    case Term::Kind::scalar:
      if (t.scalar_type == bool_) return Expr(t.value != 0);
      if (t.scalar_type == i64) return Expr(int(t.value));
      return Expr(t.value);
    case Term::Kind::elementwise:
      return elementwise_op(t.op).call(args);
    case Term::Kind::reduction:
      return reduction_op(t.op).call(args.at(0), t.all_axes ? Axes() : Axes(t.axes), t.ddof);
    case Term::Kind::cast:
      return nf::astype(args.at(0), t.to);
    case Term::Kind::product:
      return t.op == "dot" ? nf::dot(args.at(0), args.at(1)) : nf::matmul(args.at(0), args.at(1));
    case Term::Kind::take:
      return nf::take(args.at(0), args.at(1), t.axis, t.mode);
  }
  throw std::logic_error("fuzz: a term of no kind");
}

}  // namespace

Expr build_term(const Statement& s, const std::vector<Array>& inputs, int i,
                std::vector<std::optional<Expr>>& memo) {
  if (memo.size() < s.terms.size()) memo.resize(s.terms.size());
  if (memo[std::size_t(i)]) return *memo[std::size_t(i)];
  const Term& t = s.terms[std::size_t(i)];
  std::vector<Expr> args;
  for (int a : t.args) args.push_back(build_term(s, inputs, a, memo));
  Expr e = make_term(t, args, inputs);
  memo[std::size_t(i)] = e;
  return e;
}

std::vector<Expr> build(const Statement& s, const std::vector<Array>& inputs) {
  std::vector<std::optional<Expr>> memo;
  std::vector<Expr> roots;
  for (int r : s.roots) roots.push_back(build_term(s, inputs, r, memo));
  return roots;
}

std::vector<Array> run(const Statement& s, const std::vector<Array>& inputs) {
  const std::vector<Expr> roots = build(s, inputs);
  switch (s.kind) {
    case Statement::Kind::assign:
      return {Array(roots.at(0))};
    case Statement::Kind::eval:
      return nf::eval(roots);
    case Statement::Kind::update: {
      Array target = apply(s.target_view, inputs.at(std::size_t(s.target)));
      if (s.op == '+') target += roots.at(0);
      if (s.op == '-') target -= roots.at(0);
      if (s.op == '*') target *= roots.at(0);
      if (s.op == '/') target /= roots.at(0);
      return {inputs.at(std::size_t(s.target))};
    }
    case Statement::Kind::write:
      apply(s.target_view, inputs.at(std::size_t(s.target))) = roots.at(0);
      return {inputs.at(std::size_t(s.target))};
  }
  throw std::logic_error("fuzz: a statement of no kind");
}

namespace {

std::string number(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  std::string t = o.str();
  if (t.find_first_of(".en") == std::string::npos) t += ".0";
  return t;
}

std::string shape_text(const Shape& s) {
  std::string t = "{";
  for (std::size_t i = 0; i < s.size(); ++i) {
    t += i ? ", " : "";
    t += std::to_string(s[i]);
  }
  return t + "}";
}

std::string dtype_text(DType t) {
  return t == bool_ ? "nf::bool_" : "nf::" + std::string(name(t));
}

std::string term_text(const Statement& s, int i) {
  const Term& t = s.terms[std::size_t(i)];
  std::string args;
  for (std::size_t j = 0; j < t.args.size(); ++j) {
    args += j ? ", " : "";
    args += term_text(s, t.args[j]);
  }
  switch (t.kind) {
    case Term::Kind::leaf:
      return std::string("a") + std::to_string(t.input) + to_cpp(t.view);
    case Term::Kind::scalar:
      if (t.scalar_type == bool_) return t.value != 0 ? "true" : "false";
      if (t.scalar_type == i64) return std::to_string(std::int64_t(t.value));
      return number(t.value);
    case Term::Kind::elementwise:
      return "nf::" + t.op + "(" + args + ")";
    case Term::Kind::reduction: {
      std::string axes;
      if (!t.all_axes) {
        if (t.axes.size() == 1) {
          axes = ", " + std::to_string(t.axes[0]);
        } else {
          axes = ", {";
          for (std::size_t j = 0; j < t.axes.size(); ++j) {
            axes += j ? ", " : "";
            axes += std::to_string(t.axes[j]);
          }
          axes += "}";
        }
      }
      if (reduction_op(t.op).takes_ddof && t.ddof != 0) {
        if (t.all_axes) axes = ", {}";
        axes += ", " + std::to_string(t.ddof);
      }
      return "nf::" + t.op + "(" + args + axes + ")";
    }
    case Term::Kind::cast:
      return "nf::astype(" + args + ", " + dtype_text(t.to) + ")";
    case Term::Kind::product:
      return "nf::" + t.op + "(" + args + ")";
    case Term::Kind::take: {
      static const char* const modes[] = {"raise", "wrap", "clip"};
      return "nf::take(" + args + ", " + std::to_string(t.axis) +
             ", nf::TakeMode::" + modes[int(t.mode)] + ")";
    }
  }
  return "?";
}

}  // namespace

std::string to_cpp(const View& v) {
  std::string t;
  if (!v.slices.empty()) {
    t += "(";
    for (std::size_t i = 0; i < v.slices.size(); ++i) {
      const SliceSpec& s = v.slices[i];
      t += i ? ", " : "";
      t += "nf::slice(" + std::to_string(s.start) + ", " + std::to_string(s.stop) +
           (s.step != 1 ? ", " + std::to_string(s.step) : std::string()) + ")";
    }
    t += ")";
  }
  if (v.T) {
    t += ".T()";
  } else if (!v.perm.empty()) {
    t += ".transpose({";
    for (std::size_t i = 0; i < v.perm.size(); ++i) {
      t += i ? ", " : "";
      t += std::to_string(v.perm[i]);
    }
    t += "})";
  }
  return t;
}

std::string to_cpp(const Statement& s) {
  std::string out;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    const Input& in = s.inputs[i];
    std::string values;
    if (in.values.size() <= 24) {
      for (std::size_t j = 0; j < in.values.size(); ++j) {
        values += j ? ", " : "";
        values += number(in.values[j]);
      }
    } else {
      values = "/* " + std::to_string(in.values.size()) + " values of domain " +
               std::string(name(in.domain)) + ", as the case makes them */";
    }
    out += std::string("nf::Array a") + std::to_string(i) + " = nf::array(std::vector<double>{" +
           values + "}, {" + std::to_string(in.values.size()) + "}).reshape(" +
           shape_text(in.shape) + ").astype(" + dtype_text(in.dtype) + ");\n";
  }
  switch (s.kind) {
    case Statement::Kind::assign:
      out += "nf::Array r = " + term_text(s, s.roots.at(0)) + ";\n";
      break;
    case Statement::Kind::eval: {
      out += "auto [";
      std::string roots;
      for (std::size_t r = 0; r < s.roots.size(); ++r) {
        out += r ? ", r" : "r";
        out += std::to_string(r);
        roots += r ? ",\n    " : "";
        roots += term_text(s, s.roots[r]);
      }
      out += "] = nf::eval(\n    " + roots + ");\n";
      break;
    }
    case Statement::Kind::update:
      out += std::string("a") + std::to_string(s.target) + to_cpp(s.target_view) + " " + s.op +
             "= " + term_text(s, s.roots.at(0)) + ";\n";
      break;
    case Statement::Kind::write:
      out += std::string("a") + std::to_string(s.target) + to_cpp(s.target_view) + " = " +
             term_text(s, s.roots.at(0)) + ";\n";
      break;
  }
  return out;
}

}  // namespace nf::fuzz
