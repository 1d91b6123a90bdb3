#include "plan/statement_key.hpp"

#include <xxhash.h>

#include "plan/memory_layout.hpp"

namespace nf {
namespace {

class KeyWriter {
 public:
  KeyWriter(StatementKey& key, std::size_t reserve) : key_(key) {
    key_.words.clear();
    key_.words.reserve(reserve);
  }
  KeyWriter& add(std::uint64_t w) {
    key_.words.push_back(w);
    return *this;
  }
  template <class Range>
  KeyWriter& add_all(const Range& v) {
    add(v.size());
    for (const auto& x : v) add(std::uint64_t(x));
    return *this;
  }
  // A view's layout, up to where it starts: kernels depend on its offset
  // only through vector alignment and the reach of 32-bit indices.
  KeyWriter& add_layout(const Array& a) {
    add(std::uint64_t(a.dtype())).add_all(a.shape()).add_all(a.strides());
    return add(std::uint64_t(a.offset() & 15))
        .add(beyond_int32(a.shape(), a.strides(), a.offset()));
  }
  // Hashed in one pass at the end: mixing word by word is a serial chain of
  // multiplies, and XXH3 over the buffer made chain8's key a quarter faster.
  void finish() {
    key_.hash = XXH3_64bits(key_.words.data(), key_.words.size() * sizeof(std::uint64_t));
  }

 private:
  StatementKey& key_;
};

}  // namespace

StatementKey statement_key(const Program& p, std::span<const Array> outputs,
                           const ScheduleOptions& options) {
  StatementKey key;
  statement_key(p, outputs, options, key);
  return key;
}

void statement_key(const Program& p, std::span<const Array> outputs, const ScheduleOptions& options,
                   StatementKey& key) {
  // Enough words for nodes and outputs of rank 2 (a rank-2 leaf takes 16),
  // so that a typical key never regrows.
  KeyWriter k(key, p.nodes.size() * 16 + outputs.size() * 12 + 8);
  k.add(options.fuse)
      .add(std::uint64_t(options.max_nodes))
      .add(std::uint64_t(options.max_operands));
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = *p.nodes[i];
    k.add(std::uint64_t(n.op) | std::uint64_t(n.dtype) << 16 | std::uint64_t(n.weak) << 32);
    k.add_all(n.shape).add_all(p.inputs[i]);
    visit_attributes([&](AttributeUse use, const char*, auto field) {
      if (use != AttributeUse::value) attribute_words(n.*field, [&](std::uint64_t w) { k.add(w); });
    });
    if (op_kind(n.op) == OpKind::leaf) k.add_layout(*n.array);
  }
  k.add_all(p.roots);
  for (const Array& o : outputs) k.add_layout(o);
  if (!outputs.empty()) {
    const Device d = outputs[0].device();
    k.add(std::uint64_t(d.kind) << 32 | std::uint32_t(d.index));
  }
  k.finish();
}

}  // namespace nf
