#include "graph/build.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "core/hash_mix.hpp"
#include "core/scalar_fits.hpp"
#include "core/shape_util.hpp"
#include "core/storage.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_cast.h"

namespace nf {
namespace {

// Structural hash of a node: op, types, shape, attributes and the hashes of
// its inputs. Leaves hash by the storage and view they read. It runs for
// every node built, so it mixes words in place (the planner confirms every
// match by comparing nodes).
class Hasher {
 public:
  template <class T>
  Hasher& add(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    std::uint64_t w = 0;
    std::memcpy(&w, &v, sizeof v);
    h_ = hash_mix(h_, w);
    return *this;
  }
  template <class T>
  Hasher& add_vec(const std::vector<T>& v) {
    add(v.size());
    for (const T& x : v) add(x);
    return *this;
  }
  std::uint64_t digest() const {
    std::uint64_t h = h_;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
  }

 private:
  std::uint64_t h_ = kHashSeed;
};

// Arrays of one statement live on one device; mixing them is the user's
// error, caught where it is written.
void place(Node& n) {
  if (n.array) {
    n.device = n.array->device();
    return;
  }
  n.device.reset();  // a rebuilt node takes its new inputs' device
  for (const auto& in : n.inputs) {
    if (!in->device) continue;
    if (n.device && *n.device != *in->device) {
      throw ValueError("nf::" + std::string(op_name(n.op)) + ": operands live on " +
                       to_string(*n.device) + " and " + to_string(*in->device) +
                       "; move one with Array::to(device)");
    }
    n.device = in->device;
  }
}

// "nf::add" and so on, as literals: finish() can name a node's op in an
// error without building a string for every node it makes.
constexpr const char* kQualifiedName[] = {
#define NF_ELEMENTWISE(name, ...) "nf::" #name,
#define NF_REDUCTION(name, ...) "nf::" #name,
#define NF_STRUCTURAL(name, ...) "nf::" #name,
#include "graph/ops.def"
};

NodePtr finish(std::shared_ptr<Node> made) {
  Node& n = *made;
  // Every node may be materialised or indexed by byte offsets: its size is
  // checked here, once, where its shape was made (a broadcast, a product,
  // a generator's shape, a cast to a wider dtype).
  checked_bytes(n.shape, n.dtype, kQualifiedName[std::size_t(n.op)]);
  place(n);
  Hasher h;
  h.add(n.op).add(n.dtype).add(n.weak).add_vec(n.shape);
  n.depth = 0;
  for (const auto& in : n.inputs) {
    h.add(in->hash);
    n.depth = std::max(n.depth, in->depth + 1);
  }
  visit_attributes([&](auto, const char*, auto field) {
    attribute_words(n.*field, [&](std::uint64_t w) { h.add(w); });
  });
  if (n.array) {
    h.add(n.array->storage().get()).add(n.array->offset()).add_vec(n.array->strides());
  }
  n.hash = h.digest();
  return made;
}

// Node blocks (a Node and its reference counts, some 220 bytes) are made and
// freed by the dozen per statement, more than malloc's per-thread cache of a
// size holds (7 blocks): the rest took malloc's slow path, a third of
// building and tearing down chain8. Each thread keeps up to kKeptBlocks freed
// blocks for its next nodes instead. A block may be freed on another thread
// than made it; it then joins that thread's list, all blocks being alike.
struct FreeBlocks {
  void* head;
  std::uint32_t count;
  bool closed;  // the thread is exiting: free blocks to the heap
};
constexpr std::uint32_t kKeptBlocks = 256;
// Trivially destructible, so that nodes freed late in a thread's exit (by
// other thread_local owners) still find it; Drain empties it at exit.
thread_local constinit FreeBlocks t_free{nullptr, 0, false};

struct Drain {
  ~Drain() {
    t_free.closed = true;
    while (t_free.head) {
      void* next = *static_cast<void**>(t_free.head);
      ::operator delete(t_free.head);
      t_free.head = next;
    }
    t_free.count = 0;
  }
};
thread_local Drain t_drain;

template <class T>
struct NodeAllocator {
  using value_type = T;
  static_assert(sizeof(T) >= sizeof(void*));

  NodeAllocator() = default;
  template <class U>
  NodeAllocator(const NodeAllocator<U>&) {}

  T* allocate(std::size_t n) {
    FreeBlocks& free = t_free;
    if (n == 1 && free.head) {
      void* p = free.head;
      free.head = *static_cast<void**>(p);
      --free.count;
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) {
    FreeBlocks& free = t_free;
    if (n != 1 || free.count >= kKeptBlocks || free.closed) {
      ::operator delete(p);
      return;
    }
    // The first block kept registers the drain for this thread's exit.
    if (free.count == 0) static_cast<void>(&t_drain);
    *reinterpret_cast<void**>(p) = free.head;
    free.head = p;
    ++free.count;
  }
  template <class U>
  bool operator==(const NodeAllocator<U>&) const {
    return true;
  }
};

template <class... A>
std::shared_ptr<Node> new_node(A&&... a) {
  return std::allocate_shared<Node>(NodeAllocator<Node>(), std::forward<A>(a)...);
}

// Nodes are made in the block their shared pointer owns and filled in there:
// moving a finished Node (some 200 bytes) into the block, then destroying the
// emptied original, cost a tenth of building chain8.
std::shared_ptr<Node> node(OpId op, DType t, Shape shape, NodeInputs inputs = {}) {
  auto n = new_node();
  n->op = op;
  n->dtype = t;
  n->shape = std::move(shape);
  n->inputs = std::move(inputs);
  return n;
}

std::string op_str(OpId op) {
  return "nf::" + std::string(op_name(op));
}

// A floating constant folded into an integer dtype takes the value a kernel
// converting it would compute: the one rule of jit/runtime/nf_cast.h.
std::int64_t float_to_int(double v, DType t) {
  switch (t) {
    case DType::u8:
      return nf_convert<nf_u8>(v);
    case DType::i32:
      return nf_convert<nf_i32>(v);
    default:
      return nf_convert<nf_i64>(v);
  }
}

int kind_of(DType t) {
  return t == bool_ ? 0 : is_integral(t) ? 1 : 2;
}

// The default dtype of a weak kind that meets a lower kind (numpy: an int
// array with a Python float gives f64; a bool array with a Python int, i64).
DType weak_default(DType weak) {
  return weak == bool_ ? bool_ : is_integral(weak) ? i64 : f64;
}

void check_fits(const Node& c, DType t, OpId op) {
  if (c.op != OpId::constant || !is_integral(c.dtype)) return;
  check_int_fits(c.value.i, t, op_str(op));
}

// numpy raises for an integer power with a negative integer exponent; one
// known when the statement is built raises here. An array's negative
// exponents compute nf_power's documented result (jit/runtime/nf_ops.h).
void check_integer_exponent(const Node& exponent, DType t) {
  if (exponent.op == OpId::constant && exponent.value.i < 0) {
    throw ValueError("nf::power: integers to negative integer powers are not allowed (" +
                     std::string(name(t)) + " to the power " + std::to_string(exponent.value.i) +
                     "); use a floating base, e.g. nf::power(nf::astype(x, nf::f64), " +
                     std::to_string(exponent.value.i) + ")");
  }
}

// NumPy 2 (NEP 50) promotion: weak scalars take the arrays' dtype unless they
// are of a higher kind.
struct Promoted {
  DType dtype;
  bool weak;
};
Promoted promote(std::span<const NodePtr> ins, OpId op) {
  bool have_strong = false;
  DType strong = bool_, weak = bool_;
  for (const auto& in : ins) {
    if (in->weak) {
      weak = promote_types(weak, in->dtype);
    } else {
      strong = have_strong ? promote_types(strong, in->dtype) : in->dtype;
      have_strong = true;
    }
  }
  if (!have_strong) return {weak, true};
  DType p = strong;
  if (kind_of(weak) > kind_of(strong)) p = promote_types(strong, weak_default(weak));
  for (const auto& in : ins) {
    if (in->weak) check_fits(*in, p, op);
  }
  return {p, false};
}

// A 0-d constant. Statements in a loop name the same C++ scalars every time
// (`x * 0.5f`), each a weak constant and its cast to the arrays' dtype: the
// constants this thread made last are kept and reused, so a warm statement
// makes no constant nodes. They hold no storage, and nodes are immutable.
// Kept in 16 sets of two, the most recently used first: a statement's few
// constants rarely evict each other.
NodePtr constant(DType t, bool weak, double f, std::int64_t i) {
  thread_local std::array<std::array<NodePtr, 2>, 16> recent;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &f, sizeof f);
  const std::uint64_t h =
      hash_mix(hash_mix(hash_mix(kHashSeed, bits), std::uint64_t(i)), std::uint64_t(t) << 1 | weak);
  auto& set = recent[(h * 0xC4CEB9FE1A85EC53ULL) >> 60];
  const auto same = [&](const NodePtr& c) {
    return c && c->dtype == t && c->weak == weak && c->value == ConstantValue{f, i};
  };
  if (same(set[0])) return set[0];
  if (same(set[1])) {
    std::swap(set[0], set[1]);
    return set[0];
  }
  auto n = node(OpId::constant, t, {});
  n->weak = weak;
  n->value = {f, i};
  set[1] = std::move(set[0]);
  set[0] = finish(std::move(n));
  return set[0];
}

// The same view of the same storage; a live leaf holds its storage, so an
// equal address is the same buffer.
bool same_view(const Array& a, const Array& b) {
  return a.storage() == b.storage() && a.dtype() == b.dtype() && a.offset() == b.offset() &&
         a.shape() == b.shape() && a.strides() == b.strides();
}

}  // namespace

NodePtr rebuild(const Node& n, NodeInputs inputs) {
  auto copy = new_node(n);
  copy->inputs = std::move(inputs);
  return finish(std::move(copy));
}

NodePtr make_leaf(const Array& a) {
  // A statement often names one array several times (`x * x`, `exp(-x)`),
  // and the planner merges their equal leaves anyway; while the last leaf
  // this thread made is alive, a view equal to it reuses it rather than
  // building a node of five allocations again.
  thread_local std::weak_ptr<const Node> last;
  if (NodePtr n = last.lock(); n && same_view(*n->array, a)) return n;
  auto n = node(OpId::leaf, a.dtype(), a.shape());
  n->array = std::make_shared<const Array>(a);
  NodePtr leaf = finish(std::move(n));
  last = leaf;
  return leaf;
}

NodePtr make_weak_float(double v) {
  return constant(f64, true, v, 0);
}

NodePtr make_weak_int(std::int64_t v) {
  return constant(i64, true, static_cast<double>(v), v);
}

NodePtr make_weak_bool(bool v) {
  return constant(bool_, true, v, v);
}

NodePtr make_constant(double v, DType t) {
  return constant(t, false, v, t == bool_ ? v != 0 : float_to_int(v, t));
}

NodePtr make_iota(const Shape& shape, int axis, DType t) {
  auto n = node(OpId::iota, t, shape);
  n->axis = normalize_axis(axis, int(shape.size()), "iota");
  return finish(std::move(n));
}

NodePtr make_random(OpId op, const Shape& shape, DType t, std::uint64_t seed,
                    std::uint64_t stream) {
  if (!is_floating(t)) {
    throw DTypeError(op_str(op) + ": random values need a floating dtype, got " +
                     std::string(name(t)));
  }
  auto n = node(op, t, shape);
  n->seed = seed;
  n->stream = stream;
  return finish(std::move(n));
}

NodePtr make_cast(const NodePtr& x, DType t) {
  if (x->dtype == t && !x->weak) return x;
  if (x->op == OpId::constant) {
    // Fold: a constant cast is a constant of the new dtype.
    double f = x->value.f;
    std::int64_t i = x->value.i;
    if (!is_floating(x->dtype)) {
      f = double(i);
    } else if (t == bool_) {
      i = f != 0;
    } else if (!is_floating(t)) {
      i = float_to_int(f, t);
    }
    return constant(t, false, f, i);
  }
  return finish(node(OpId::cast, t, x->shape, {x}));
}

NodePtr make_elementwise(OpId op, NodeInputs inputs) {
  const OpInfo& info = op_info(op);
  if (info.kind != OpKind::elementwise || int(inputs.size()) != info.arity) {
    throw InternalError("make_elementwise: " + op_str(op) + " with " +
                        std::to_string(inputs.size()) + " inputs");
  }
  Shape shape = inputs[0]->shape;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    // Equal shapes and 0-d operands (C++ scalars) need no broadcasting.
    const Shape& s = inputs[i]->shape;
    if (s == shape || s.empty()) continue;
    shape = shape.empty() ? s : broadcast_shapes(shape, s, op_str(op).c_str());
  }
  // where(): the condition takes no part in promotion.
  const bool select = info.rule == ResultRule::select;
  const Promoted p = promote({inputs.begin() + (select ? 1 : 0), inputs.end()}, op);
  const DType operand = operand_dtype(op, p.dtype);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const DType want = (select && i == 0) ? bool_ : operand;
    // All-weak expressions stay weak; only their kind matters. Inputs that
    // need no cast keep their pointer untouched (no reference-count traffic).
    const bool cast = inputs[i]->dtype != want || (!p.weak && inputs[i]->weak);
    if (cast) inputs[i] = make_cast(inputs[i], want);
  }
  if (op == OpId::power && is_integral(operand)) check_integer_exponent(*inputs[1], operand);
  auto n = node(op, result_dtype(op, p.dtype), std::move(shape), std::move(inputs));
  n->weak = p.weak;
  return finish(std::move(n));
}

NodePtr make_reduction(OpId op, const NodePtr& x, const Axes& axes, int ddof) {
  const char* name = op_name(op).data();
  std::vector<int> ax = normalize_axes(axes, int(x->shape.size()), name);
  Shape shape = x->shape;
  std::int64_t reduced = 1;
  for (int a : ax) {
    reduced *= shape[a];
    shape[a] = 1;
  }
  const bool needs_identity =
      op == OpId::min || op == OpId::max || op == OpId::argmin || op == OpId::argmax;
  if (needs_identity && reduced == 0 && numel(shape) > 0) {
    throw ValueError(op_str(op) + ": reduction over an empty axis of shape " + to_string(x->shape) +
                     " has no identity");
  }
  if (ddof < 0) throw ValueError(op_str(op) + ": ddof must be >= 0, got " + std::to_string(ddof));
  // Over axes of length 1 such a reduction returns its one element: a cast
  // that fuses as elementwise work, where a reduction kernel would read the
  // whole array one narrow column per thread.
  if (reduces_own_results(op) && reduced == 1 && !x->weak) {
    return make_cast(x, result_dtype(op, x->dtype));
  }
  const DType operand = operand_dtype(op, x->dtype);
  auto n = node(op, result_dtype(op, x->dtype), std::move(shape), {make_cast(x, operand)});
  n->axes = std::move(ax);
  n->ddof = ddof;
  n->weak = x->weak;
  return finish(std::move(n));
}

NodePtr make_reshape(const NodePtr& x, Shape shape) {
  const auto minus = std::count(shape.begin(), shape.end(), -1);
  if (minus > 1) throw ShapeError("reshape: only one dimension may be -1 in " + to_string(shape));
  Shape known_dims;
  for (auto d : shape) {
    if (d < -1) throw ShapeError("reshape: negative dimension in " + to_string(shape));
    if (d != -1) known_dims.push_back(d);
  }
  const std::int64_t known = checked_numel(known_dims, "reshape");
  const std::int64_t n = numel(x->shape);
  const bool fits = minus ? known > 0 && n % known == 0 : known == n;
  if (!fits) {
    throw ShapeError("reshape: cannot reshape an array of shape " + to_string(x->shape) +
                     " (size " + std::to_string(n) + ") into shape " + to_string(shape));
  }
  if (minus) *std::find(shape.begin(), shape.end(), -1) = n / known;
  if (shape == x->shape) return x;
  // A reshape is a view of C-ordered memory. What a transpose, a broadcast or
  // a strided leaf holds is not in that order, so it is copied first; every
  // other node is computed into new contiguous memory anyway.
  const OpKind k = op_kind(x->op);
  const bool in_c_order =
      k == OpKind::leaf ? x->array->is_contiguous() : k != OpKind::view || x->op == OpId::reshape;
  auto r = node(OpId::reshape, x->dtype, std::move(shape),
                {in_c_order ? x : make_elementwise(OpId::copy, {x})});
  r->weak = x->weak;
  return finish(std::move(r));
}

NodePtr make_permute(const NodePtr& x, std::vector<int> perm) {
  const int nd = int(x->shape.size());
  if (perm.empty()) {
    for (int i = nd - 1; i >= 0; --i) perm.push_back(i);
  }
  if (int(perm.size()) != nd) {
    throw ShapeError("transpose: permutation of " + std::to_string(perm.size()) +
                     " axes for shape " + to_string(x->shape));
  }
  Shape shape(nd);
  std::vector<bool> seen(nd, false);
  for (int i = 0; i < nd; ++i) {
    perm[i] = normalize_axis(perm[i], nd, "transpose");
    if (seen[perm[i]]) throw ShapeError("transpose: axis repeated in the permutation");
    seen[perm[i]] = true;
    shape[i] = x->shape[perm[i]];
  }
  auto n = node(OpId::permute, x->dtype, std::move(shape), {x});
  n->axes = std::move(perm);
  n->weak = x->weak;
  return finish(std::move(n));
}

NodePtr make_broadcast(const NodePtr& x, const Shape& shape) {
  if (shape.size() < x->shape.size() ||
      broadcast_shapes(x->shape, shape, "broadcast_to") != shape) {
    throw ShapeError("broadcast_to: cannot broadcast shape " + to_string(x->shape) + " to " +
                     to_string(shape));
  }
  if (shape == x->shape) return x;
  auto n = node(OpId::broadcast, x->dtype, shape, {x});
  n->weak = x->weak;
  return finish(std::move(n));
}

namespace {

// BLAS reads a matrix where it lies when one of its axes has a unit stride;
// an array with neither (every other column) is copied first, by one kernel.
NodePtr blas_readable(const NodePtr& x) {
  if (x->op != OpId::leaf) return x;
  const Array& a = *x->array;
  const std::size_t nd = a.shape().size();
  if (matrix_storage(a.shape()[nd - 2], a.shape()[nd - 1], a.strides()[nd - 2],
                     a.strides()[nd - 1])) {
    return x;
  }
  return make_elementwise(OpId::copy, {x});
}

}  // namespace

NodePtr make_matmul(const NodePtr& a, const NodePtr& b, MatmulPrecision precision) {
  const Shape& sa = a->shape;
  const Shape& sb = b->shape;
  if (sa.size() < 2 || sb.size() < 2) {
    throw InternalError("make_matmul: operands must have at least 2 dimensions");
  }
  const std::int64_t k = sa.back();
  if (sb[sb.size() - 2] != k) {
    throw ShapeError("nf::matmul: shapes " + to_string(sa) + " and " + to_string(sb) +
                     " are not aligned (" + std::to_string(k) +
                     " != " + std::to_string(sb[sb.size() - 2]) + ")");
  }
  Shape batch = broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2),
                                 "nf::matmul (batch axes)");
  const NodePtr operands[] = {blas_readable(a), blas_readable(b)};
  const Promoted p = promote(operands, OpId::matmul);
  Shape shape = batch;
  shape.push_back(sa[sa.size() - 2]);
  shape.push_back(sb.back());
  auto n = node(OpId::matmul, p.dtype, std::move(shape),
                {make_cast(operands[0], p.dtype), make_cast(operands[1], p.dtype)});
  // Only f32 products have modes: others keep the default, so that their
  // structure does not depend on the thread's setting.
  if (p.dtype == f32) n->precision = precision;
  return finish(std::move(n));
}

NodePtr make_take(const NodePtr& a, const NodePtr& indices, int axis, TakeMode mode) {
  const DType t = indices->dtype;
  if (t != i32 && t != i64 && t != u8) {
    throw DTypeError(
        "nf::take: indices must be integers (i32, i64 or u8), got " + std::string(name(t)) +
        (t == bool_ ? "; select with a mask through nf::compress or nf::extract" : ""));
  }
  if (axis < 0 || axis >= int(a->shape.size())) {
    throw InternalError("make_take: axis " + std::to_string(axis) + " of a rank " +
                        std::to_string(a->shape.size()) + " operand");
  }
  Shape shape(a->shape.begin(), a->shape.begin() + axis);
  shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
  shape.insert(shape.end(), a->shape.begin() + axis + 1, a->shape.end());
  auto n = node(OpId::take, a->dtype, std::move(shape), {a, indices});
  n->axis = axis;
  n->mode = mode;
  return finish(std::move(n));
}

}  // namespace nf
