// Every collective against a reference worked on the host in double: each
// rank makes every rank's input itself (the same seed gives the same values
// on every rank and backend), so it knows what the combination must be.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

using nf::dist::Op;

namespace {

const nf::DType kDTypes[] = {nf::f16, nf::bf16, nf::f32, nf::f64,
                             nf::i32, nf::i64,  nf::u8,  nf::bool_};
const nf::Shape kShapes[] = {{0}, {1}, {7}, {3, 5}, {2, 3, 33}, {}};

// Rank r's input for case `salt`: fresh random values, never all zero;
// integers small enough that sums over the ranks stay in u8.
nf::Array input_of(int r, nf::DType t, const nf::Shape& s, std::uint64_t salt) {
  nf::seed(salt * 1009 + static_cast<std::uint64_t>(r));
  if (nf::is_floating(t)) return nf::randn(s, t) * 3;
  if (t == nf::bool_) return nf::rand(s) < 0.5;
  return nf::astype(nf::floor(nf::rand(s) * 20) - (t == nf::u8 ? 0 : 10), t);
}

std::vector<double> values(const nf::Array& a) {
  return a.to_vector<double>();
}

// The unit roundoff of a dtype; 0 where results are exact.
double eps(nf::DType t) {
  switch (t) {
    case nf::f16:
      return std::ldexp(1.0, -11);
    case nf::bf16:
      return std::ldexp(1.0, -8);
    case nf::f32:
      return std::ldexp(1.0, -24);
    case nf::f64:
      return std::ldexp(1.0, -53);
    default:
      return 0;
  }
}

// The ranks' elements combined by `op` in double, and how far a result in
// `t` may stray: a rounding a step of the combination, and one at the end.
struct Expected {
  std::vector<double> value;
  std::vector<double> tolerance;
};

Expected combine(const std::vector<std::vector<double>>& each, Op op, nf::DType t) {
  Expected e{each[0], std::vector<double>(each[0].size(), 0.0)};
  for (std::size_t i = 0; i < e.value.size(); ++i) {
    double magnitude = std::abs(each[0][i]);
    for (std::size_t r = 1; r < each.size(); ++r) {
      const double x = each[r][i];
      magnitude += std::abs(x);
      if (op == Op::max)
        e.value[i] = std::max(e.value[i], x);
      else if (op == Op::min)
        e.value[i] = std::min(e.value[i], x);
      else
        e.value[i] += x;
    }
    if (op == Op::mean) e.value[i] /= static_cast<double>(each.size());
    if (t == nf::bool_ && op == Op::sum) e.value[i] = e.value[i] != 0;
    if (op == Op::sum || op == Op::mean) {
      e.tolerance[i] = 2 * eps(t) * magnitude * static_cast<double>(each.size());
    }
  }
  return e;
}

void check_close(const std::vector<double>& got, const Expected& want) {
  REQUIRE(got.size() == want.value.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want.value[i]) <= want.tolerance[i]);
  }
}

std::vector<std::vector<double>> every_rank(nf::DType t, const nf::Shape& s, std::uint64_t salt) {
  std::vector<std::vector<double>> each;
  for (int r = 0; r < nf::dist::size(); ++r) each.push_back(values(input_of(r, t, s, salt)));
  return each;
}

std::vector<Op> ops_for(nf::DType t) {
  if (nf::is_floating(t)) return {Op::sum, Op::mean, Op::max, Op::min};
  return {Op::sum, Op::max, Op::min};
}

const char* op_name(Op op) {
  static const char* const names[] = {"sum", "mean", "max", "min"};
  return names[static_cast<int>(op)];
}

}  // namespace

TEST_CASE("each rank has its place, and the ranks are all there") {
  const int size = nf::dist::size();
  const int rank = nf::dist::rank();
  REQUIRE(size >= 1);
  REQUIRE((rank >= 0 && rank < size));
  CHECK((nf::dist::local_rank() >= 0 && nf::dist::local_rank() <= rank));
  CHECK(nf::dist::initialized());
  const std::vector<std::int64_t> ranks =
      nf::dist::all_gather(nf::full({}, rank, nf::i64)).to_vector<std::int64_t>();
  std::vector<std::int64_t> want(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) want[static_cast<std::size_t>(r)] = r;
  CHECK(ranks == want);
  if (nf::default_device().kind == nf::Device::Kind::cuda) {
    CHECK(nf::default_device().index == nf::dist::local_rank());
  }
}

TEST_CASE("all_reduce combines every rank's array, for every op, dtype and shape") {
  std::uint64_t salt = 1;
  for (nf::DType t : kDTypes) {
    for (const nf::Shape& s : kShapes) {
      const std::vector<std::vector<double>> each = every_rank(t, s, salt);
      for (Op op : ops_for(t)) {
        INFO(name(t) << " " << nf::to_string(s) << " " << op_name(op));
        const nf::Array got = nf::dist::all_reduce(input_of(nf::dist::rank(), t, s, salt), op);
        CHECK(got.dtype() == t);
        CHECK(got.shape() == s);
        check_close(values(got), combine(each, op, t));
      }
      ++salt;
    }
  }
}

TEST_CASE("all_reduce evaluates an expression into the buffer it combines, or into out") {
  const nf::Shape s{5, 9};
  const int rank = nf::dist::rank();
  std::vector<std::vector<double>> each;
  for (int r = 0; r < nf::dist::size(); ++r) {
    each.push_back(values(nf::exp(input_of(r, nf::f32, s, 77) * 0.5) + 1));
  }
  const nf::Array x = input_of(rank, nf::f32, s, 77);
  const std::vector<double> x_before = values(x);
  const Expected want = combine(each, Op::sum, nf::f32);

  check_close(values(nf::dist::all_reduce(nf::exp(x * 0.5) + 1)), want);
  CHECK(values(x) == x_before);

  nf::Array out = nf::zeros(s);
  nf::dist::all_reduce(nf::exp(x * 0.5) + 1, Op::sum, out);
  check_close(values(out), want);

  // In place: out's own elements are this rank's share.
  out = nf::exp(x * 0.5) + 1;
  const nf::Array view_of_out = out;
  nf::dist::all_reduce(out, Op::sum, out);
  check_close(values(view_of_out), want);

  // A plain array passed in is left as it was.
  const nf::Array plain = nf::exp(x * 0.5) + 1;
  const std::vector<double> plain_before = values(plain);
  check_close(values(nf::dist::all_reduce(plain)), want);
  CHECK(values(plain) == plain_before);
}

TEST_CASE("broadcast gives root's array to every rank, whatever the others hold") {
  std::uint64_t salt = 300;
  for (nf::DType t : kDTypes) {
    for (int root = 0; root < nf::dist::size(); ++root) {
      INFO(name(t) << " root " << root);
      const nf::Shape s{4, 11};
      const nf::Array got = nf::dist::broadcast(input_of(nf::dist::rank(), t, s, salt), root);
      CHECK(got.shape() == s);
      CHECK(got.dtype() == t);
      CHECK(values(got) == values(input_of(root, t, s, salt)));
      ++salt;
    }
  }
  const nf::Array empty = nf::dist::broadcast(nf::zeros({0, 3}), 0);
  CHECK(empty.shape() == nf::Shape{0, 3});
}

TEST_CASE("all_gather concatenates every rank's array along axis 0 in rank order") {
  const std::int64_t size = nf::dist::size();
  std::uint64_t salt = 500;
  for (nf::DType t : kDTypes) {
    for (const nf::Shape& s : kShapes) {
      INFO(name(t) << " " << nf::to_string(s));
      const nf::Array got = nf::dist::all_gather(input_of(nf::dist::rank(), t, s, salt));
      nf::Shape want_shape = s.empty() ? nf::Shape{size} : s;
      if (!s.empty()) want_shape[0] *= size;
      CHECK(got.shape() == want_shape);
      std::vector<double> want;
      for (const std::vector<double>& part : every_rank(t, s, salt)) {
        want.insert(want.end(), part.begin(), part.end());
      }
      CHECK(values(got) == want);
      ++salt;
    }
  }
}

TEST_CASE("reduce_scatter combines every rank's array and leaves each rank its part") {
  const std::int64_t size = nf::dist::size();
  const int rank = nf::dist::rank();
  std::uint64_t salt = 700;
  for (nf::DType t : kDTypes) {
    for (std::int64_t rows : {std::int64_t{1}, std::int64_t{3}}) {
      const nf::Shape s{rows * size, 5};
      const std::vector<std::vector<double>> each = every_rank(t, s, salt);
      for (Op op : ops_for(t)) {
        INFO(name(t) << " " << nf::to_string(s) << " " << op_name(op));
        const nf::Array got = nf::dist::reduce_scatter(input_of(rank, t, s, salt), op);
        CHECK(got.shape() == nf::Shape{rows, 5});
        const Expected all = combine(each, op, t);
        const std::size_t part = static_cast<std::size_t>(rows * 5);
        const auto first = static_cast<std::ptrdiff_t>(part * static_cast<std::size_t>(rank));
        const Expected mine{{all.value.begin() + first, all.value.begin() + first + part},
                            {all.tolerance.begin() + first, all.tolerance.begin() + first + part}};
        check_close(values(got), mine);
      }
      ++salt;
    }
  }
}

TEST_CASE("barrier returns on every rank, and collectives after it still meet") {
  nf::dist::barrier();
  const double got = nf::dist::all_reduce(nf::full({}, 1.0)).item<double>();
  CHECK(got == nf::dist::size());
}

TEST_CASE("gradients of each rank's rows, summed over the ranks, are the whole batch's") {
  // One layer of a net, y = tanh(x w), and the loss sum((y - t)^2) / rows.
  const std::int64_t rows = 24, in = 9, out = 5;  // 24 rows split over 1, 2, 3 or 4 ranks
  REQUIRE(rows % nf::dist::size() == 0);
  nf::seed(900);
  const nf::Array x = nf::randn({rows, in});
  const nf::Array t = nf::randn({rows, out});
  const nf::Array w = nf::randn({in, out}) * 0.3;
  const auto gradient = [&](const nf::Array& xs, const nf::Array& ts) {
    const nf::Array y = nf::tanh(nf::dot(xs, w));
    return nf::Array(nf::dot(xs.T(), (y - ts) * (1 - y * y) * (2.0 / rows)));
  };
  const std::vector<double> whole = gradient(x, t).to_vector<double>();

  const std::int64_t part = rows / nf::dist::size(), first = nf::dist::rank() * part;
  const nf::Array mine =
      gradient(x(nf::slice(first, first + part)), t(nf::slice(first, first + part)));
  const std::vector<double> summed = nf::dist::all_reduce(mine).to_vector<double>();
  REQUIRE(summed.size() == whole.size());
  double scale = 0;
  for (double g : whole) scale = std::max(scale, std::abs(g));
  for (std::size_t i = 0; i < whole.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(summed[i] - whole[i]) <= 1e-5 * scale);
  }
}

TEST_CASE("all_reduce of a list combines each array, all in one buffer") {
  const int rank = nf::dist::rank();
  for (nf::DType t : {nf::f32, nf::bf16, nf::i64}) {
    const std::vector<nf::Shape> shapes = {{3, 4}, {}, {0, 2}, {17}, {2, 3, 5}};
    for (Op op : ops_for(t)) {
      INFO(name(t) << " " << op_name(op));
      std::vector<nf::Expr> xs;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        // An expression, so that evaluating into the buffer is what is tested.
        xs.push_back(input_of(rank, t, shapes[i], 40 + i) * 1);
      }
      const std::vector<nf::Array> got = nf::dist::all_reduce(xs, op);
      REQUIRE(got.size() == shapes.size());
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        INFO("array " << i);
        CHECK(got[i].shape() == shapes[i]);
        CHECK(got[i].dtype() == xs[i].dtype());
        std::vector<std::vector<double>> each;
        for (int r = 0; r < nf::dist::size(); ++r) {
          each.push_back(values(input_of(r, t, shapes[i], 40 + i) * 1));
        }
        check_close(values(got[i]), combine(each, op, xs[i].dtype()));
      }
    }
  }
  CHECK(nf::dist::all_reduce(std::vector<nf::Expr>{}).empty());
}

TEST_CASE("all_reduce_async gives all_reduce's results, with work queued beside it") {
  const int rank = nf::dist::rank();
  const nf::Shape shapes[] = {{64, 33}, {33}, {5, 7, 3}};
  std::vector<nf::Array> inputs;
  std::vector<nf::Expr> first, second;
  for (std::size_t i = 0; i < 3; ++i) {
    inputs.push_back(input_of(rank, nf::f32, shapes[i], 70 + i));
    first.push_back(inputs[i] * 1);
    second.push_back(input_of(rank, nf::f32, shapes[i], 80 + i) * 2 + 1);
  }
  nf::dist::Pending p1 = nf::dist::all_reduce_async(first);
  // Work on the device between the collective and its wait, and the inputs
  // changed in place: neither may reach the sums.
  const nf::Array product = nf::dot(inputs[0].T(), inputs[0]);
  for (nf::Array& a : inputs) a += 100;
  nf::dist::Pending p2 = nf::dist::all_reduce_async(second, Op::max);
  const std::vector<nf::Array> got2 = p2.wait();  // waited for out of order
  const std::vector<nf::Array> got1 = p1.wait();
  REQUIRE(got1.size() == 3);
  REQUIRE(got2.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("array " << i);
    CHECK(got1[i].shape() == shapes[i]);
    std::vector<std::vector<double>> each1, each2;
    for (int r = 0; r < nf::dist::size(); ++r) {
      each1.push_back(values(input_of(r, nf::f32, shapes[i], 70 + i)));
      each2.push_back(values(input_of(r, nf::f32, shapes[i], 80 + i) * 2 + 1));
    }
    check_close(values(got1[i]), combine(each1, Op::sum, nf::f32));
    check_close(values(got2[i]), combine(each2, Op::max, nf::f32));
  }
  // The product queued beside the first sum is this rank's own.
  const nf::Array mine = input_of(rank, nf::f32, shapes[0], 70);
  CHECK(nf::max(nf::abs(product - nf::dot(mine.T(), mine))).item<double>() <= 1e-3);
  // Waiting again gives the same arrays; a Pending let go unwaited waits as
  // it goes, and the collectives after it still meet.
  CHECK(p1.wait()[0].storage() == got1[0].storage());
  { nf::dist::Pending dropped = nf::dist::all_reduce_async({inputs[1] * 1}); }
  CHECK(nf::dist::all_reduce_async(std::vector<nf::Expr>{}).wait().empty());
  CHECK(values(nf::dist::all_reduce(nf::ones({2}))) ==
        std::vector<double>(2, double(nf::dist::size())));
}
