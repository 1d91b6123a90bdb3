// Recordings (numfuse/record.hpp): statements recorded once, run by each
// replay over the arrays they name. On the CPU backend a replay runs the
// statements again; on a GPU it is one CUDA graph launch (tests run on both).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <numfuse/numfuse.hpp>

namespace {

using V = std::vector<double>;

V random_values(std::size_t n, unsigned seed, double lo = -2, double hi = 2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  V v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

nf::Array random_array(const nf::Shape& shape, unsigned seed, nf::DType t = nf::f64) {
  std::size_t n = 1;
  for (auto d : shape) n *= std::size_t(d);
  return nf::array(random_values(n, seed), shape).astype(t);
}

void check_close(const V& got, const V& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("a recording runs nothing until replayed, then its statements at each replay") {
  const V x0 = random_values(300, 1), w0 = random_values(300, 2);
  nf::Array x = nf::array(x0, {3, 100});
  nf::Array w = nf::array(w0, {3, 100});
  nf::Array y = nf::zeros({3, 100}, nf::f64);

  const nf::Recording r = nf::record([&] {
    y() = x * 2 + w;
    w += 1;
  });
  CHECK(r.statements() == 2);
  CHECK(r.device() == nf::default_device());
  // Nothing ran.
  CHECK(y.to_vector<double>() == V(300, 0.0));
  CHECK(w.to_vector<double>() == w0);

  V want_y(300), want_w = w0;
  for (int replay = 1; replay <= 3; ++replay) {
    r.replay();
    for (std::size_t i = 0; i < 300; ++i) {
      want_y[i] = 2 * x0[i] + want_w[i];
      want_w[i] += 1;
    }
    INFO("replay " << replay);
    check_close(y.to_vector<double>(), want_y, 1e-12);
    check_close(w.to_vector<double>(), want_w, 1e-12);
  }
}

TEST_CASE("a replay reads its arrays' values as they are when it runs") {
  nf::Array x = random_array({7, 33}, 3, nf::f32);
  nf::Array s = nf::zeros({7, 1}, nf::f32);
  const nf::Recording r = nf::record([&] { s() = sum(x * x, 1); });
  for (unsigned seed = 10; seed < 13; ++seed) {
    const V xs = random_values(7 * 33, seed);
    x() = nf::array(xs, {7, 33});  // outside the recording: runs now
    r.replay();
    V want(7, 0.0);
    for (std::size_t i = 0; i < 7; ++i) {
      for (std::size_t j = 0; j < 33; ++j) {
        const double v = double(float(xs[i * 33 + j]));
        want[i] += v * v;
      }
    }
    check_close(s.to_vector<double>(), want, 1e-5);
  }
}

TEST_CASE("replays give what the statements give run one by one: the mission line, a product") {
  const float eps = 1e-5f;
  // Two copies of each array: one updated by replays, one by the same
  // statements run as they are written.
  nf::Array a = random_array({37, 129}, 4, nf::f32), a_ref = a.copy();
  nf::Array b = random_array({129, 18}, 5, nf::f32);
  nf::Array bias = random_array({18}, 6, nf::f32);
  nf::Array h = nf::zeros({37, 18}, nf::f32), h_ref = h.copy();
  nf::Array total = nf::zeros({1, 1}, nf::f32), total_ref = total.copy();

  auto step = [&](nf::Array& a_, nf::Array& h_, nf::Array& total_) {
    a_() = reciprocal(sqrt(var(a_, 1) + eps)) * (a_ - mean(a_, 1));
    // A temporary made in the body, read by the next statement.
    const nf::Array t = nf::eval(relu(matmul(a_, b) + bias))[0];
    h_() = t * 0.5f + h_;
    total_ += sum(h_);
  };
  const nf::Recording r = nf::record([&] { step(a, h, total); });
  CHECK(r.statements() == 4);
  for (int i = 0; i < 5; ++i) {
    r.replay();
    step(a_ref, h_ref, total_ref);
  }
  check_close(a.to_vector<double>(), a_ref.to_vector<double>(), 1e-5);
  check_close(h.to_vector<double>(), h_ref.to_vector<double>(), 1e-4);
  check_close(total.to_vector<double>(), total_ref.to_vector<double>(), 1e-4);
  // The reference itself against a hand computation: rows normalised.
  const V an = a_ref.to_vector<double>();
  for (std::size_t i = 0; i < 37; ++i) {
    double m = 0;
    for (std::size_t j = 0; j < 129; ++j) m += an[i * 129 + j];
    CHECK(std::abs(m / 129) < 1e-4);
  }
}

TEST_CASE("a recording keeps the arrays it names alive") {
  nf::Array out = nf::zeros({64}, nf::f32);
  V in0;
  nf::Recording r = [&] {
    // Arrays that go out of scope before the replays.
    nf::Array in = random_array({64}, 7, nf::f32);
    in0 = in.to_vector<double>();
    nf::Array scratch = nf::zeros({64}, nf::f32);
    return nf::record([&] {
      scratch() = in * 3;
      out += scratch - 1;
    });
  }();
  r.replay();
  r.replay();
  V want(64);
  for (std::size_t i = 0; i < 64; ++i) want[i] = 2 * (3 * in0[i] - 1);
  check_close(out.to_vector<double>(), want, 1e-5);
}

TEST_CASE("a recording of no statement replays nothing") {
  const nf::Recording r = nf::record([] {});
  CHECK(r.statements() == 0);
  r.replay();
}

TEST_CASE("what a recording cannot take throws ValueError, records nothing and changes nothing") {
  const V x0 = random_values(40, 8);
  nf::Array x = nf::array(x0, {40});
  nf::Array y = nf::array(random_values(40, 9), {40});
  const V y0 = y.to_vector<double>();

  auto fails = [&](const std::function<void()>& body, const std::string& says) {
    CHECK_THROWS_AS(nf::record(body), nf::ValueError);
    CHECK_THROWS_WITH(nf::record(body), Catch::Contains(says));
    CHECK(x.to_vector<double>() == x0);
    CHECK(y.to_vector<double>() == y0);
    // The device records and runs as before.
    const nf::Recording r = nf::record([&] { y() = y * 1; });
    r.replay();
    CHECK(y.to_vector<double>() == y0);
  };
  SECTION("a read to the host") {
    fails(
        [&] {
          y += 1;
          (void)x.to_vector<double>();
        },
        "reading an array's values to the host");
  }
  SECTION("an item") {
    fails([&] { (void)sum(x).item<double>(); }, "reading an array's values");
  }
  SECTION("an array made from host values") {
    fails([&] { y += nf::array(V(40, 1.0), {40}); }, "an array made from host values");
  }
  SECTION("random numbers") {
    fails([&] { y += nf::rand({40}, nf::f64); }, "random numbers");
  }
  SECTION("a = expr reading a") {
    fails([&] { y = y * 2; }, "a() = expr");
    // Where expr does not read it, a is a new array, written at each replay.
    nf::Array z = nf::zeros({40}, nf::f64);
    const nf::Recording r = nf::record([&] { z = x * 3; });
    r.replay();
    V want(40);
    for (std::size_t i = 0; i < 40; ++i) want[i] = 3 * x0[i];
    CHECK(z.to_vector<double>() == want);
  }
  SECTION("a recording within a recording, and a replay") {
    fails([&] { nf::record([] {}); }, "cannot record another");
    const nf::Recording inner = nf::record([&] { y += 1; });
    fails([&] { inner.replay(); }, "cannot be replayed while this thread records");
  }
  SECTION("a statement on another device") {
    if (nf::default_device().kind == nf::Device::Kind::cuda) {
      nf::Array on_cpu = nf::zeros({4}, nf::f64).to(nf::Device::cpu());
      fails([&] { on_cpu += 1; }, "records statements on cuda:0");
      const nf::Array operand = nf::zeros({40}, nf::f64).to(nf::Device::cpu());
      // y + operand is refused where it is written; a write of it into y
      // reaches the statement runner.
      fails([&] { y() = operand; }, "an array on cpu was used in a statement running on cuda:0");
    }
  }
  SECTION("whatever the body throws is thrown on") {
    CHECK_THROWS_WITH(nf::record([&] {
                        y += 1;
                        throw std::runtime_error("the body's own error");
                      }),
                      "the body's own error");
    CHECK(y.to_vector<double>() == y0);
  }
}

TEST_CASE("on a GPU, a statement from another thread meanwhile throws ValueError") {
  if (nf::default_device().kind != nf::Device::Kind::cuda) return;
  nf::Array x = nf::ones({16}, nf::f32);
  std::string error;
  const nf::Recording r = nf::record([&] {
    x += 1;
    std::thread other([&] {
      try {
        x += 1;
      } catch (const nf::ValueError& e) {
        error = e.what();
      }
    });
    other.join();
  });
  CHECK_THAT(error, Catch::Contains("while another thread records"));
  r.replay();
  CHECK(x.to_vector<double>() == V(16, 2.0));
}
