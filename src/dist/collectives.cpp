// The collectives of numfuse/dist.hpp: agree on the call, check it, evaluate
// the statement into the buffer the transport reads, move the bytes.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/execute.hpp"
#include "core/hash_mix.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "dist/agreement.hpp"
#include "dist/transport.hpp"
#include "dist/world.hpp"
#include "graph/node.hpp"
#include "numfuse/dist.hpp"
#include "numfuse/errors.hpp"

namespace nf::dist {
namespace {

Call call_of(Collective collective, const Expr& x, Op op = Op::sum, int root = 0) {
  return {collective, op, root, x.dtype(), device_of(x).kind, x.shape(), true};
}

Transport& transport(Device d) {
  return d.kind == Device::Kind::cuda ? device_transport(d.index) : host_transport();
}

void* data_of(const Array& a) {
  return static_cast<char*>(a.storage()->data) + a.offset() * itemsize(a.dtype());
}

std::size_t count_of(const Array& a) {
  return static_cast<std::size_t>(a.size());
}

// Every rank's `buffer` (contiguous, evaluated) combined in place by `op`.
void combine(const Array& buffer, Op op) {
  if (buffer.size() == 0) return;
  transport(buffer.device()).all_reduce(data_of(buffer), count_of(buffer), buffer.dtype(), op);
}

// Checks that need every rank's call to have agreed first, so that all
// ranks throw them or none does. Bool's sum is numpy's np.add: logical or.
Op checked_op(const Call& c) {
  if (c.op == Op::mean && !is_floating(c.dtype)) {
    throw DTypeError("nf::dist::" + describe(c) +
                     ": mean needs a floating dtype; use sum and divide, or astype(f32)");
  }
  return c.dtype == bool_ && c.op == Op::sum ? Op::max : c.op;
}

// The first axis, split or gathered over the ranks.
Shape with_first_axis(const Shape& s, std::int64_t n) {
  Shape out = s;
  if (out.empty())
    out.push_back(n);
  else
    out[0] = n;
  return out;
}

// Why `out` cannot receive x (numpy's out= rules), or null.
std::exception_ptr fault_of_out(const Expr& x, const Array& out) {
  try {
    if (out.shape() != x.shape()) {
      throw ShapeError("nf::dist::all_reduce: out has shape " + to_string(out.shape()) +
                       ", the value " + to_string(x.shape()));
    }
    if (out.dtype() != x.dtype()) {
      throw DTypeError("nf::dist::all_reduce: out has dtype " + std::string(name(out.dtype())) +
                       ", the value " + std::string(name(x.dtype())));
    }
    if (out.device() != device_of(x)) {
      throw ValueError("nf::dist::all_reduce: out is on " + to_string(out.device()) +
                       ", the value on " + to_string(device_of(x)));
    }
    if (!out.is_contiguous() || !out.writeable()) {
      throw ValueError("nf::dist::all_reduce: out must be contiguous and writeable; it has shape " +
                       to_string(out.shape()) + " and strides " + to_string(out.strides()));
    }
  } catch (const Error&) {
    return std::current_exception();
  }
  return nullptr;
}

// Whether x is `out` itself, so that reducing in place evaluates nothing.
bool is_array(const Expr& x, const Array& out) {
  const Node& n = *x.node();
  return n.array && n.array->storage() == out.storage() && n.array->offset() == out.offset() &&
         n.array->strides() == out.strides() && n.shape == out.shape() && n.dtype == out.dtype();
}

}  // namespace

Array all_reduce(const Expr& x, Op op) {
  Call call = call_of(Collective::all_reduce, x, op);
  agree(call);
  op = checked_op(call);
  Array out(x);
  combine(out, op);
  return out;
}

void all_reduce(const Expr& x, Op op, const Array& out) {
  const std::exception_ptr fault = fault_of_out(x, out);
  Call call = call_of(Collective::all_reduce, x, op);
  call.ready = !fault;
  agree(call);
  if (fault) std::rethrow_exception(fault);
  op = checked_op(call);
  if (!is_array(x, out)) execute(x.node(), out);
  combine(out, op);
}

namespace {

// A list's statements, agreed on and evaluated into one buffer, ready to be
// combined: `flat` the buffer, `out` the views of it the caller gets.
struct Bucket {
  Array flat;
  std::vector<Array> out;
  Op op = Op::sum;
};

Bucket bucket_of(const std::vector<Expr>& xs, Op op) {
  std::exception_ptr fault;
  Call call{Collective::all_reduce,
            op,
            0,
            xs.empty() ? f32 : xs[0].dtype(),
            xs.empty() ? default_device().kind : device_of(xs[0]).kind,
            Shape{0},
            true};
  call.arrays = static_cast<int>(xs.size());
  std::vector<std::int64_t> offsets{0};
  for (const Expr& x : xs) {
    offsets.push_back(offsets.back() + x.size());
    call.layout = hash_mix(call.layout, x.shape().size());
    for (std::int64_t d : x.shape()) call.layout = hash_mix(call.layout, std::uint64_t(d));
    if (!fault && (x.dtype() != call.dtype || device_of(x) != device_of(xs[0]))) {
      fault = std::make_exception_ptr(DTypeError(
          "nf::dist::all_reduce of a list: every array must have one dtype and device; the first "
          "is " +
          std::string(name(call.dtype)) + " on " + to_string(device_of(xs[0])) + ", another " +
          std::string(name(x.dtype())) + " on " + to_string(device_of(x))));
    }
  }
  call.shape = {offsets.back()};
  call.ready = !fault;
  agree(call);
  if (fault) std::rethrow_exception(fault);
  if (xs.empty()) return {};
  Bucket b{new_array(call.dtype, call.shape, device_of(xs[0])), {}, checked_op(call)};
  std::vector<NodePtr> roots;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    b.out.push_back(b.flat(slice(offsets[i], offsets[i + 1])).reshape(xs[i].shape()));
    roots.push_back(xs[i].node());
  }
  execute(roots, b.out);
  return b;
}

}  // namespace

std::vector<Array> all_reduce(const std::vector<Expr>& xs, Op op) {
  Bucket b = bucket_of(xs, op);
  if (!b.out.empty()) combine(b.flat, b.op);
  return b.out;
}

// The buffer stays held until wait(), so that numfuse's pool cannot hand its
// memory out again while the collective beside numfuse's stream still uses it.
struct Pending::State {
  Bucket bucket;
  std::function<void()> join;  // has numfuse's stream wait for the collective
};

Pending::Pending() = default;
Pending::Pending(Pending&&) noexcept = default;
Pending& Pending::operator=(Pending&& other) noexcept {
  if (this != &other) {
    Pending old(std::move(*this));
    state_ = std::move(other.state_);
  }
  return *this;
}

Pending::~Pending() {
  try {
    wait();
  } catch (...) {
    // A broken device: what queues on it next reports it.
  }
}

std::vector<Array> Pending::wait() {
  if (!state_) return {};
  if (state_->join) std::exchange(state_->join, nullptr)();
  return state_->bucket.out;
}

Pending all_reduce_async(const std::vector<Expr>& xs, Op op) {
  Pending p;
  p.state_ = std::make_unique<Pending::State>();
  p.state_->bucket = bucket_of(xs, op);
  const Array& flat = p.state_->bucket.flat;
  if (flat.size()) {
    p.state_->join =
        transport(flat.device())
            .all_reduce_beside(data_of(flat), count_of(flat), flat.dtype(), p.state_->bucket.op);
  }
  return p;
}

Array broadcast(const Expr& x, int root) {
  const Call call = call_of(Collective::broadcast, x, Op::sum, root);
  agree(call);
  if (root < 0 || root >= size()) {
    throw ValueError("nf::dist::" + describe(call) + ": root must be a rank, 0 to " +
                     std::to_string(size() - 1));
  }
  Array out = rank() == root ? Array(x) : new_array(x.dtype(), x.shape(), device_of(x));
  if (out.size()) transport(out.device()).broadcast(data_of(out), count_of(out), out.dtype(), root);
  return out;
}

Array all_gather(const Expr& x) {
  const Call call = call_of(Collective::all_gather, x);
  agree(call);
  const std::int64_t n = x.ndim() ? x.shape()[0] : 1;
  Array out = new_array(x.dtype(), with_first_axis(x.shape(), n * size()), device_of(x));
  if (x.ndim()) {
    out(slice(rank() * n, (rank() + 1) * n)) = x;
  } else {
    out(rank()) = x;
  }
  if (out.size()) {
    transport(out.device()).all_gather(data_of(out), count_of(out) / size(), out.dtype());
  }
  return out;
}

Array reduce_scatter(const Expr& x, Op op) {
  const Call call = call_of(Collective::reduce_scatter, x, op);
  agree(call);
  op = checked_op(call);
  if (x.ndim() == 0 || x.shape()[0] % size() != 0) {
    throw ShapeError("nf::dist::" + describe(call) + ": the first axis must split into " +
                     std::to_string(size()) + " equal parts, one a rank");
  }
  const Array send(x);
  Array out = new_array(x.dtype(), with_first_axis(x.shape(), x.shape()[0] / size()), device_of(x));
  if (out.size()) {
    transport(out.device())
        .reduce_scatter(data_of(send), data_of(out), count_of(out), out.dtype(), op);
  }
  return out;
}

void barrier() {
  const Device d = default_device();
  if (d.kind == Device::Kind::cuda) cuda::synchronize(d.index);
  agree({Collective::barrier, Op::sum, 0, f32, d.kind, {}, true});
}

}  // namespace nf::dist
