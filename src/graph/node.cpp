#include "graph/node.hpp"

#include <iterator>
#include <string>

#include "numfuse/errors.hpp"

namespace nf {

void NodeInputs::too_many() {
  throw InternalError("a node with more than " + std::to_string(kMax) + " inputs");
}

// Below this depth the members' own destructors tear a tree down, recursing
// at most this deep; the explicit walk below costs more than they do.
constexpr std::uint32_t kRecursiveTeardownDepth = 64;

Node::~Node() {
  if (depth < kRecursiveTeardownDepth) return;
  std::vector<NodePtr> pending(std::make_move_iterator(inputs.begin()),
                               std::make_move_iterator(inputs.end()));
  while (!pending.empty()) {
    NodePtr n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) {
      // The last owner: take its inputs so it dies with none. Nodes are
      // created non-const (build.cpp), so this cast is sound.
      auto& ins = const_cast<Node&>(*n).inputs;
      for (auto& in : ins) pending.push_back(std::move(in));
      ins.clear();
    }
  }
}

bool same_attributes(const Node& a, const Node& b) {
  bool same = true;
  visit_attributes([&](auto, const char*, auto field) { same = same && a.*field == b.*field; });
  return same;
}

std::string code_attributes(const Node& n) {
  std::string text;
  visit_attributes([&](auto use, const char* name, auto field) {
    if constexpr (use == AttributeUse::code) {
      const auto& v = n.*field;
      using T = std::remove_cvref_t<decltype(v)>;
      static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                    "code attributes are written as numbers");
      // Appended piece by piece: GCC 12 takes "@" + std::string(name) here for
      // an overlapping copy in the ASan build (-Wrestrict, a false positive).
      if (v != T{})
        text.append("@").append(name).append("=").append(std::to_string(static_cast<long long>(v)));
    }
  });
  return text;
}

}  // namespace nf
