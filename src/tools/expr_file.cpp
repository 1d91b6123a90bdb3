#include "tools/expr_file.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include "graph/build.hpp"
#include "numfuse/errors.hpp"
#include "plan/memory_layout.hpp"

namespace nf::tools {
namespace {

struct OpByName {
  OpId op;
  OpKind kind;
  int arity;
};

// Every op a file may call by name, from the op table.
const std::map<std::string, OpByName, std::less<>>& ops_by_name() {
  static const auto ops = [] {
    std::map<std::string, OpByName, std::less<>> m;
#define NF_ELEMENTWISE(name, arity, ...) m[#name] = {OpId::name, OpKind::elementwise, arity};
#define NF_REDUCTION(name, ...) m[#name] = {OpId::name, OpKind::reduction, 0};
#include "graph/ops.def"
    return m;
  }();
  return ops;
}

const std::map<std::string, OpId, std::less<>> kBinary = {
    {"+", OpId::add},         {"-", OpId::subtract},   {"*", OpId::multiply},
    {"/", OpId::divide},      {"%", OpId::remainder},  {"<", OpId::less},
    {"<=", OpId::less_equal}, {">", OpId::greater},    {">=", OpId::greater_equal},
    {"==", OpId::equal},      {"!=", OpId::not_equal},
};

// 2^63, exact as a double: the first integer an int64 cannot hold.
constexpr double kInt64Reach = 9223372036854775808.0;
// Axes beyond this are no array's (ranks are far smaller).
constexpr std::int64_t kMaxAxis = 1 << 30;

// One line, parsed by recursive descent; names resolve in `names`.
class LineParser {
 public:
  LineParser(std::string_view text, std::string where, const std::map<std::string, NodePtr>& names)
      : text_(text), where_(std::move(where)), names_(names) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(where_ + ":" + std::to_string(pos_ + 1) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    // "<" is not the start of "<=".
    if (token.size() == 1 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=' &&
        std::string_view("<>=!").find(token[0]) != std::string_view::npos) {
      return false;
    }
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!eat(token)) fail("expected '" + std::string(token) + "'");
  }

  std::string identifier() {
    skip_space();
    const std::size_t begin = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (begin == pos_ || std::isdigit(static_cast<unsigned char>(text_[begin]))) {
      pos_ = begin;
      fail("expected a name");
    }
    return std::string(text_.substr(begin, pos_ - begin));
  }

  std::optional<double> number(bool* integral) {
    skip_space();
    if (pos_ >= text_.size() ||
        !(std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      return std::nullopt;
    }
    const std::string rest(text_.substr(pos_));
    char* end = nullptr;
    const double value = std::strtod(rest.c_str(), &end);
    const std::size_t used = std::size_t(end - rest.c_str());
    if (used == 0) fail("expected a number");
    *integral = rest.substr(0, used).find_first_of(".eE") == std::string::npos;
    pos_ += used;
    return value;
  }

  NodePtr expression() { return comparison(); }

  NodePtr comparison() {
    NodePtr left = additive();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (eat(op)) return make_elementwise(kBinary.at(op), {left, additive()});
    }
    return left;
  }

  NodePtr additive() {
    NodePtr left = term();
    for (;;) {
      if (eat("+")) {
        left = make_elementwise(OpId::add, {left, term()});
      } else if (eat("-")) {
        left = make_elementwise(OpId::subtract, {left, term()});
      } else {
        return left;
      }
    }
  }

  NodePtr term() {
    NodePtr left = unary();
    for (;;) {
      const char* op = eat("*") ? "*" : eat("/") ? "/" : eat("%") ? "%" : nullptr;
      if (!op) return left;
      left = make_elementwise(kBinary.at(op), {left, unary()});
    }
  }

  NodePtr unary() {
    if (!eat("-")) return primary();
    // A negative literal stays a literal, so that axes may be negative.
    bool integral = false;
    if (const std::optional<double> v = number(&integral)) {
      return integral ? make_weak_int(-std::int64_t(*v)) : make_weak_float(-*v);
    }
    return make_elementwise(OpId::negative, {unary()});
  }

  NodePtr primary() {
    if (eat("(")) {
      NodePtr inner = expression();
      expect(")");
      return inner;
    }
    bool integral = false;
    if (const std::optional<double> v = number(&integral)) {
      return integral ? make_weak_int(std::int64_t(*v)) : make_weak_float(*v);
    }
    const std::size_t at = pos_;
    if (pos_ >= text_.size() ||
        !(std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      fail("expected a number, a name or '('");
    }
    const std::string name = identifier();
    if (eat("(")) return call(name, at);
    const auto it = names_.find(name);
    if (it == names_.end()) {
      pos_ = at;
      fail("\"" + name + "\" is not declared (declare inputs as `" + name + ": f32[rows, cols]`)");
    }
    if (eat("[")) return indexed(*it->second->array);
    return it->second;
  }

  // After "name[": numpy's indices of a named array, each an integer or
  // start:stop:step with any part left out, and the closing bracket; the
  // view the statement reads.
  NodePtr indexed(const Array& a) {
    std::vector<Index> idx;
    do {
      std::optional<std::int64_t> part[3];
      int colons = 0;
      part[0] = index_number();
      while (colons < 2 && eat(":")) part[++colons] = index_number();
      if (colons == 0 && !part[0]) fail("expected an index or a slice");
      if (colons == 0) idx.emplace_back(*part[0]);
      if (colons > 0) idx.emplace_back(slice(part[0], part[1], part[2].value_or(1)));
    } while (eat(","));
    expect("]");
    return make_leaf(a.index(idx));
  }

  // An integer, possibly negative, where one is written.
  std::optional<std::int64_t> index_number() {
    const std::size_t at = pos_;
    const bool negative = eat("-");
    bool integral = false;
    const std::optional<double> v = number(&integral);
    if (!v && !negative) return std::nullopt;
    if (!v || !integral) {
      pos_ = at;
      fail("indices are integers");
    }
    if (*v >= kInt64Reach) {
      pos_ = at;
      fail("the index is past any axis's length");
    }
    return negative ? -std::int64_t(*v) : std::int64_t(*v);
  }

  // After "name(": the arguments and the closing parenthesis.
  NodePtr call(const std::string& name, std::size_t at) {
    std::vector<NodePtr> args;
    if (!eat(")")) {
      do {
        args.push_back(expression());
      } while (eat(","));
      expect(")");
    }
    const auto arity_error = [&](const std::string& wants) {
      pos_ = at;
      fail(name + "() takes " + wants + ", not " + std::to_string(args.size()) + " arguments");
    };
    if (name == "dot" || name == "matmul") {
      if (args.size() != 2) arity_error("2 arrays");
      const Expr a(args[0]), b(args[1]);
      return (name == "dot" ? nf::dot(a, b) : nf::matmul(a, b)).node();
    }
    // The integers after the array: a reduction's axes, a transpose's order.
    auto axes = [&] {
      std::vector<int> out;
      for (std::size_t i = 1; i < args.size(); ++i) {
        const Node& axis = *args[i];
        if (axis.op != OpId::constant || !axis.weak || !is_integral(axis.dtype)) {
          pos_ = at;
          fail(name + "(): axes are integers, as in " + name + "(A, 1)");
        }
        // Past an int it would wrap to another axis, not fail.
        if (axis.value.i > kMaxAxis || axis.value.i < -kMaxAxis) {
          pos_ = at;
          fail(name + "(): axis " + std::to_string(axis.value.i) + " is past any array's rank");
        }
        out.push_back(int(axis.value.i));
      }
      return out;
    };
    if (name == "transpose") {
      if (args.empty()) arity_error("an array and, optionally, its axes in their new order");
      return make_permute(args[0], axes());
    }
    const auto op = ops_by_name().find(name);
    if (op == ops_by_name().end()) {
      pos_ = at;
      fail("no op is called \"" + name + "\"");
    }
    if (op->second.kind == OpKind::elementwise) {
      if (int(args.size()) != op->second.arity) {
        const int n = op->second.arity;
        arity_error(n == 1 ? "1 array" : std::to_string(n) + " arrays");
      }
      return make_elementwise(op->second.op, NodeInputs(args));
    }
    if (args.empty()) arity_error("an array and its axes");
    const std::vector<int> over = axes();
    return make_reduction(op->second.op, args[0], over.empty() ? Axes() : Axes(over));
  }

  std::size_t pos() const { return pos_; }
  void rewind(std::size_t pos) { pos_ = pos; }

 private:
  std::string_view text_;
  std::string where_;
  const std::map<std::string, NodePtr>& names_;
  std::size_t pos_ = 0;
};

DType dtype_named(const std::string& text, const LineParser& p) {
  for (DType t : all_dtypes) {
    if (name(t) == text) return t;
  }
  p.fail("\"" + text + "\" is not a dtype: use bool, u8, i32, i64, f16, bf16, f32 or f64");
}

// `dtype[d0, d1, ...]`, after "name:".
NodePtr declaration(LineParser& p) {
  const DType dtype = dtype_named(p.identifier(), p);
  p.expect("[");
  Shape shape;
  if (!p.eat("]")) {
    do {
      bool integral = false;
      const std::optional<double> d = p.number(&integral);
      if (!d || !integral) p.fail("expected a dimension");
      if (*d >= kInt64Reach) p.fail("a dimension past what a 64-bit count holds");
      shape.push_back(std::int64_t(*d));
    } while (p.eat(","));
    p.expect("]");
  }
  return make_leaf(planned_array(dtype, shape));
}

// One line that is not blank: a declaration, or a statement, whose result
// it returns. A statement that names its result leaves in `names` an array
// of the result's dtype and shape, as assigning it to an nf::Array would.
std::optional<Expr> parse_line(LineParser& p, std::string_view line,
                               std::map<std::string, NodePtr>& names) {
  std::optional<std::string> name;
  if (std::isalpha(static_cast<unsigned char>(line[p.pos()]))) {
    const std::string id = p.identifier();
    if (p.eat(":")) {
      names[id] = declaration(p);
      if (!p.at_end()) p.fail("unexpected text after the declaration");
      return std::nullopt;
    }
    if (p.eat("=")) {
      name = id;
    } else {
      p.rewind(0);
    }
  }
  NodePtr value = p.expression();
  if (!p.at_end()) p.fail("unexpected text");
  if (name) names[*name] = make_leaf(planned_array(value->dtype, value->shape));
  return Expr(value);
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::vector<Statement> parse_statements(const std::string& text, const std::string& origin) {
  std::map<std::string, NodePtr> names;
  std::vector<Statement> statements;
  std::size_t begin = 0;
  for (int number = 1; begin < text.size(); ++number) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line = std::string_view(text).substr(begin, end - begin);
    line = line.substr(0, line.find('#'));
    begin = end + 1;
    const std::string where = origin + ":" + std::to_string(number);
    LineParser p(line, where, names);
    if (p.at_end()) continue;
    try {
      if (std::optional<Expr> result = parse_line(p, line, names)) {
        statements.push_back({number, std::string(trimmed(line)), {std::move(*result)}});
      }
    } catch (const ShapeError& e) {
      throw ShapeError(where + ": " + e.what());
    } catch (const DTypeError& e) {
      throw DTypeError(where + ": " + e.what());
    }
  }
  if (statements.empty()) throw ValueError(origin + ": no statement to inspect");
  return statements;
}

std::vector<Statement> read_statement_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw ValueError("cannot read " + path.string());
  return parse_statements(std::string(std::istreambuf_iterator<char>(file), {}), path.string());
}

}  // namespace nf::tools
