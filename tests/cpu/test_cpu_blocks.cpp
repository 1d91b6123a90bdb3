// The CPU backend evaluates each step block by block on every core: its
// temporaries stay near a block's size, and the blocks compose to exactly the
// values the whole arrays give. References are plain loops in double over
// the inputs' values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../on_device.hpp"
#include "runtime/nf_philox.h"

namespace {

using nf::Array;
using V = std::vector<double>;

// Peak resident memory of this process in bytes (VmHWM), after restarting
// the peak at the current size where the kernel allows it.
std::int64_t status_kib(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string k;
  std::int64_t v = -1;
  while (f >> k) {
    if (k == key + ":") {
      f >> v;
      break;
    }
  }
  return v;
}

std::int64_t restart_peak() {
  std::ofstream("/proc/self/clear_refs") << "5";
  return status_kib("VmHWM") * 1024;
}

std::int64_t peak() {
  return status_kib("VmHWM") * 1024;
}

// What the allocator itself may add to the peak: AddressSanitizer keeps
// freed blocks in a 256 MiB quarantine instead of reusing them, and shadows
// every byte it hands out.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::int64_t kAllocatorSlack = std::int64_t(384) << 20;
#else
constexpr std::int64_t kAllocatorSlack = 0;
#endif

// Integers in [-1000, 1000] as f64: sums of them are exact in any order, so
// block results must equal the reference bit for bit.
Array random_ints(const nf::Shape& shape, unsigned seed, nf::DType t = nf::f64) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-1000, 1000);
  V v(std::size_t(nf::numel(shape)));
  for (double& x : v) x = dist(gen);
  return nf::array(v, shape).astype(t);
}

// Integers in [0, 100] of dtype t: every dtype holds them and their sums.
Array small_ints(const nf::Shape& shape, unsigned seed, nf::DType t) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, 100);
  V v(std::size_t(nf::numel(shape)));
  for (double& x : v) x = dist(gen);
  return nf::array(v, shape).astype(t);
}

// Element `i` (C order in `out`) of an array of shape `in` broadcast to `out`.
std::int64_t broadcast_index(const nf::Shape& in, const nf::Shape& out, std::int64_t i) {
  std::int64_t at = 0, stride = 1;
  for (int d = int(out.size()) - 1; d >= 0; --d) {
    const std::int64_t k = i % out[d];
    i /= out[d];
    const int di = d - int(out.size() - in.size());
    if (di < 0) continue;
    if (in[di] != 1) at += k * stride;
    stride *= in[di];
  }
  return at;
}

// Every pattern of length-1 axes of `full`.
std::vector<nf::Shape> broadcast_patterns(const nf::Shape& full) {
  std::vector<nf::Shape> out;
  for (int mask = 0; mask < (1 << full.size()); ++mask) {
    nf::Shape s = full;
    for (std::size_t d = 0; d < full.size(); ++d) {
      if (mask & (1 << d)) s[d] = 1;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("a fused chain over 512 MiB needs less than its input's size more memory",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const std::int64_t n = std::int64_t(1) << 27;  // 512 MiB of f32
  const Array x = nf::full({n}, 0.5f);
  const std::int64_t before = restart_peak();
  const Array s = nf::sum(x * 2 + 1);
  const std::int64_t grew = peak() - before;
  INFO("peak grew by " << grew << " bytes");
  CHECK(grew < n * 4 + kAllocatorSlack);
  CHECK(s.item<double>() == 2.0 * double(n));
}

TEST_CASE("the sum of a 2 GiB u8 array stays near its output's size", "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const std::int64_t n = std::int64_t(1) << 31;
  Array x = nf::ones({n}, nf::u8);
  const std::int64_t before = restart_peak();
  const Array s = nf::sum(x);
  const std::int64_t grew = peak() - before;
  INFO("peak grew by " << grew << " bytes");
  CHECK(grew < (std::int64_t(256) << 20) + kAllocatorSlack);
  CHECK(s.item<double>() == double(n));
}

TEST_CASE("blocks give the whole-array values of broadcasts of every pattern",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Odd sizes; the second has rows longer than a block.
  for (const nf::Shape& full : {nf::Shape{5, 37, 1001}, nf::Shape{3, 1, 40001}}) {
    const Array a = random_ints(full, 1);
    const V av = a.to_vector<double>();
    for (const nf::Shape& sb : broadcast_patterns(full)) {
      INFO(nf::to_string(full) << " with " << nf::to_string(sb));
      const Array b = random_ints(sb, 2);
      const Array c = random_ints({full.back()}, 3);
      const V bv = b.to_vector<double>(), cv = c.to_vector<double>();
      const V got = Array(a * b - c * 3.0).to_vector<double>();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double want = av[i] * bv[broadcast_index(sb, full, std::int64_t(i))] -
                            cv[broadcast_index({full.back()}, full, std::int64_t(i))] * 3.0;
        wrong += got[i] != want;
      }
      CHECK(wrong == 0);
    }
  }
}

// Each operand of a row is contiguous along it or one value for the whole
// row (a column, a scalar): every mix of those runs its own loop.
TEST_CASE("where and binary ops take operands contiguous or constant along rows in every mix",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Shape full{7, 1001};
  const std::vector<nf::Shape> forms = {full, {7, 1}, {1, 1}, {1001}};
  for (nf::DType t : {nf::f64, nf::f32, nf::f16, nf::i32, nf::u8}) {
    for (std::size_t fc = 0; fc < forms.size(); ++fc) {
      const Array cond = random_ints(forms[fc], 11) > 0.0;
      const V cv = cond.to_vector<double>();
      for (std::size_t fa = 0; fa < forms.size(); ++fa) {
        const Array a = small_ints(forms[fa], 12, t);
        const V av = a.to_vector<double>();
        for (std::size_t fb = 0; fb < forms.size(); ++fb) {
          INFO(nf::name(t) << ": cond " << nf::to_string(forms[fc]) << ", a "
                           << nf::to_string(forms[fa]) << ", b " << nf::to_string(forms[fb]));
          const Array b = small_ints(forms[fb], 13, t);
          const V bv = b.to_vector<double>();
          const Array choice = nf::where(cond, a, b);
          const V picked = choice.to_vector<double>();
          const Array sum = a + b;
          const V added = sum.to_vector<double>();
          std::size_t wrong = 0;
          for (std::int64_t i = 0; i < nf::numel(full); ++i) {
            const double x = av[broadcast_index(forms[fa], full, i)];
            const double y = bv[broadcast_index(forms[fb], full, i)];
            const bool c = cv[broadcast_index(forms[fc], full, i)] != 0;
            wrong += picked[broadcast_index(choice.shape(), full, i)] != (c ? x : y);
            wrong += added[broadcast_index(sum.shape(), full, i)] != x + y;
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

TEST_CASE("blocks read transposed and stepped views through their strides",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const Array a = random_ints({301, 203}, 4, nf::f32);
  const V av = a.to_vector<double>();
  // a.T() + 1, and every other column of a, squared.
  const V t = Array(a.T() + 1.0f).to_vector<double>();
  std::size_t wrong = 0;
  for (std::int64_t i = 0; i < 203; ++i) {
    for (std::int64_t j = 0; j < 301; ++j) wrong += t[i * 301 + j] != av[j * 203 + i] + 1;
  }
  const V s = Array(nf::square(a(nf::all, nf::slice(0, nf::none, 2)))).to_vector<double>();
  for (std::int64_t i = 0; i < 301; ++i) {
    for (std::int64_t j = 0; j < 102; ++j) {
      const double x = av[i * 203 + 2 * j];
      wrong += s[i * 102 + j] != x * x;
    }
  }
  // A reversed view in a reduction over rows.
  const V r =
      Array(nf::sum(a(nf::slice(nf::none, nf::none, -1), nf::all) * 2.0f, 1)).to_vector<double>();
  for (std::int64_t i = 0; i < 301; ++i) {
    double want = 0;
    for (std::int64_t j = 0; j < 203; ++j) want += 2 * av[(300 - i) * 203 + j];
    wrong += r[i] != want;
  }
  CHECK(wrong == 0);
}

// A statement's last op writes its block straight into the target: into
// views whose rows lie apart, whose elements step, that run backwards or
// are transposed, and in place over an operand, each against plain loops;
// and, where the dtype is not the one computed, through a block buffer.
TEST_CASE("blocks write elementwise results into every kind of view of their target",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const std::int64_t rows = 67, cols = 1031;
  for (nf::DType t : {nf::f32, nf::f64, nf::i32, nf::f16}) {
    INFO(nf::name(t));
    const Array a = small_ints({rows, cols}, 21, t), c = small_ints({1, cols}, 22, t);
    const V av = a.to_vector<double>(), cv = c.to_vector<double>();
    const auto want = [&](std::int64_t i, std::int64_t j) { return av[i * cols + j] * 2 + cv[j]; };
    std::size_t wrong = 0;
    // Rows 3.. of a wider array, every other column, reversed rows.
    Array wide = nf::zeros({rows + 3, 2 * cols}, t);
    wide(nf::slice(3, nf::none), nf::slice(0, nf::none, 2)) = a * 2 + c;
    const V wv = wide.to_vector<double>();
    for (std::int64_t i = 0; i < rows + 3; ++i) {
      for (std::int64_t j = 0; j < 2 * cols; ++j) {
        const bool written = i >= 3 && j % 2 == 0;
        wrong += wv[i * 2 * cols + j] != (written ? want(i - 3, j / 2) : 0);
      }
    }
    Array back = nf::zeros({rows, cols}, t);
    back(nf::slice(nf::none, nf::none, -1)) = a * 2 + c;
    const V bv = back.to_vector<double>();
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) wrong += bv[(rows - 1 - i) * cols + j] != want(i, j);
    }
    // Into a transposed view: its rows step by the target's row length.
    Array tall = nf::zeros({cols, rows}, t);
    tall.T() = a * 2 + c;
    const V tv = tall.to_vector<double>();
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) wrong += tv[j * rows + i] != want(i, j);
    }
    // In place, the operand read where it is written.
    Array same = a.copy();
    same *= 2;
    same += c;
    const V sv = same.to_vector<double>();
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) wrong += sv[i * cols + j] != want(i, j);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("block reductions over every axis set equal plain loops", "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Odd sizes: reduced extents below a block, above it, and a full reduction
  // of 1.5 million elements split over threads.
  for (const nf::Shape& shape : {nf::Shape{7, 301, 13}, nf::Shape{3, 5, 100003}}) {
    const Array x = random_ints(shape, 5);
    const V xv = x.to_vector<double>();
    for (int mask = 1; mask < 8; ++mask) {
      std::vector<int> axes;
      nf::Shape out = shape;
      for (int d = 0; d < 3; ++d) {
        if (mask & (1 << d)) {
          axes.push_back(d);
          out[d] = 1;
        }
      }
      INFO(nf::to_string(shape) << " over mask " << mask);
      const std::int64_t m = nf::numel(out);
      V sum(m, 0), mx(m, -1e300), cnt(m, 0), sq(m, 0);
      // The output element that input element i reduces into.
      auto output_of = [&](std::int64_t i) {
        std::int64_t k = 0, rest = i;
        std::int64_t idx[3];
        for (int d = 2; d >= 0; --d) {
          idx[d] = rest % shape[d];
          rest /= shape[d];
        }
        for (int d = 0; d < 3; ++d) k = k * out[d] + (out[d] == 1 ? 0 : idx[d]);
        return k;
      };
      for (std::int64_t i = 0; i < std::int64_t(xv.size()); ++i) {
        const std::int64_t k = output_of(i);
        sum[k] += xv[i];
        mx[k] = std::max(mx[k], xv[i]);
        cnt[k] += 1;
      }
      for (std::int64_t i = 0; i < std::int64_t(xv.size()); ++i) {
        const std::int64_t k = output_of(i);
        const double dev = xv[i] - sum[k] / cnt[k];
        sq[k] += dev * dev;
      }
      const V gs = Array(nf::sum(x * 1.0, axes)).to_vector<double>();
      const V gm = Array(nf::max(x, axes)).to_vector<double>();
      const V gmean = Array(nf::mean(x, axes)).to_vector<double>();
      const V gv = Array(nf::var(x, axes)).to_vector<double>();
      std::size_t wrong = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        wrong += gs[k] != sum[k];
        wrong += gm[k] != mx[k];
        wrong += gmean[k] != sum[k] / cnt[k];
        const double var = sq[k] / cnt[k];
        wrong += std::fabs(gv[k] - var) > 1e-12 * var;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("layer norm over rows shorter and longer than a block equals plain loops",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  for (const nf::Shape& shape : {nf::Shape{1001, 37}, nf::Shape{3, 50001}}) {
    INFO(nf::to_string(shape));
    const Array x = random_ints(shape, 6);
    const double eps = 1e-5;
    const V got = Array((x - nf::mean(x, 1)) * nf::reciprocal(nf::sqrt(nf::var(x, 1) + eps)))
                      .to_vector<double>();
    const V xv = x.to_vector<double>();
    const std::int64_t rows = shape[0], cols = shape[1];
    std::size_t wrong = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
      double s = 0, q = 0;
      for (std::int64_t j = 0; j < cols; ++j) s += xv[i * cols + j];
      const double mean = s / double(cols);
      for (std::int64_t j = 0; j < cols; ++j)
        q += (xv[i * cols + j] - mean) * (xv[i * cols + j] - mean);
      const double r = 1 / std::sqrt(q / double(cols) + eps);
      for (std::int64_t j = 0; j < cols; ++j) {
        const double want = (xv[i * cols + j] - mean) * r;
        wrong += std::fabs(got[i * cols + j] - want) > 1e-12 * (1 + std::fabs(want));
      }
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("column reductions over runs cut, whole and several a block equal float64 loops",
          "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  // Reductions that keep the innermost axis take blocks of runs of the kept
  // axes inside the innermost reduced one (run_reduction): (9, 40009) over
  // 0, runs of 40009 cut in three, four reduced elements a block, partials
  // combined; (3, 40009) over 0, its three elements whole a block; (43, 37,
  // 127) over 1, several runs of 127 a block; (5, 61, 37, 127) over (1, 2),
  // one run and 129 reduced elements a block. Random values in [-1, 1).
  struct Case {
    nf::Shape shape;
    std::vector<int> axes;
  };
  const std::vector<Case> cases = {
      {{9, 40009}, {0}}, {{3, 40009}, {0}}, {{43, 37, 127}, {1}}, {{5, 61, 37, 127}, {1, 2}}};
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const Case& c : cases) {
    const std::int64_t n = nf::numel(c.shape);
    V v(static_cast<std::size_t>(n));
    for (double& x : v) x = dist(gen);
    // The output element that input element i reduces into, and the count.
    nf::Shape out = c.shape;
    for (int a : c.axes) out[a] = 1;
    const int nd = int(c.shape.size());
    const auto output_of = [&](std::int64_t i) {
      std::int64_t k = 0, stride = 1;
      for (int d = nd - 1; d >= 0; --d) {
        const std::int64_t idx = i % c.shape[d];
        i /= c.shape[d];
        if (out[d] != 1) k += idx * stride;
        stride *= out[d];
      }
      return k;
    };
    const std::int64_t m = nf::numel(out), count = n / m;
    for (nf::DType t : {nf::f32, nf::f64, nf::f16, nf::i32}) {
      INFO(nf::to_string(c.shape) << " " << nf::name(t));
      // i32 takes the values times 1000, rounded; the reference reads the
      // values as stored.
      const Array x = nf::astype(nf::array(v, c.shape) * (t == nf::i32 ? 1000.0 : 1.0), t);
      const V xv = x.to_vector<double>();
      V sum(m, 0), mag(m, 0), sq(m, 0);
      for (std::int64_t i = 0; i < n; ++i) {
        sum[output_of(i)] += xv[i];
        mag[output_of(i)] += std::fabs(xv[i]);
      }
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = xv[i] - sum[output_of(i)] / double(count);
        sq[output_of(i)] += d * d;
      }
      // Sums in f32 (f16 computes in f32) err by ~count * 2^-24 of the sum
      // of magnitudes; f16 results round to 2^-11 of themselves; i32 sums
      // are exact, and their means and variances are taken in f64.
      const double eps = t == nf::f64 || t == nf::i32 ? 1e-13 : 1e-6 * double(count) / 64 + 1e-6;
      const double rounding = t == nf::f16 ? 1e-3 : 0;
      const V gs = Array(nf::sum(x, c.axes)).to_vector<double>();
      const V gv = Array(nf::var(x, c.axes)).to_vector<double>();
      const V gc = Array(x - nf::mean(x, c.axes)).to_vector<double>();
      std::size_t wrong = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        wrong += std::fabs(gs[k] - sum[k]) > eps * mag[k] + rounding * std::fabs(sum[k]);
        const double var = sq[k] / double(count);
        wrong += std::fabs(gv[k] - var) > (eps + rounding) * (var + 1e-300) * 4 + eps;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t k = output_of(i);
        const double want = xv[i] - sum[k] / double(count);
        const double mean_error = eps * mag[k] / double(count);
        wrong += std::fabs(gc[i] - want) >
                 mean_error + (eps + rounding) * std::fabs(xv[i]) + rounding * std::fabs(want);
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("random ops in blocks draw the numbers of their linear index", "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const nf::Shape shape{3, 40001};
  const Array x = random_ints(shape, 7, nf::f32);
  const V xv = x.to_vector<double>();
  nf::seed(11);
  const nf::Expr u = nf::rand(shape);  // stream 0
  const std::vector<float> got = Array(u * 2.0f + x).to_vector<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    wrong += got[i] != nf_rand_uniform_f32(11, 0, i) * 2.0f + float(xv[i]);
  }
  CHECK(wrong == 0);
  // A normal f64 draw, transposed, summed over rows longer than a block.
  const nf::Expr g = nf::randn({40001, 3}, nf::f64);  // stream 1
  const V sums = Array(nf::sum(nf::transpose(g), 1)).to_vector<double>();
  for (std::int64_t r = 0; r < 3; ++r) {
    double want = 0;
    for (std::int64_t i = 0; i < 40001; ++i) want += nf_rand_normal_f64(11, 1, i * 3 + r);
    CHECK(std::fabs(sums[r] - want) <= 1e-9 * (1 + std::fabs(want)));
  }
}

TEST_CASE("integer sums wrap and arg-reductions index across blocks", "[cpu-backend][blocks]") {
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const std::int64_t n = 200003;
  std::vector<double> v(n, 0.0);
  v[123457] = 5;
  v[150001] = 5;  // a tie: the first index wins
  const Array a = nf::array(v, {n});
  CHECK(Array(nf::argmax(a)).item<std::int64_t>() == 123457);
  const Array big = nf::full({n}, std::int64_t(1) << 62, nf::i64);
  // 200003 * 2^62 modulo 2^64: 200003 is odd, so 2^62 * 3 mod 4 = 2^62 * 3.
  const std::int64_t want = std::int64_t(std::uint64_t(3) << 62);
  CHECK(Array(nf::sum(big)).item<std::int64_t>() == want);
}

TEST_CASE("arg-reductions over rows pick numpy's element around NaN, infinities and ties",
          "[cpu-backend][reduce]") {
  // Rows of 1003: fifteen blocks of 64, which a row skips where they cannot
  // hold a new best, a last block of the 40 whole steps of two vectors after
  // them, and 3 elements after that.
  const nf::test::OnDevice on_cpu(nf::Device::cpu());
  const std::int64_t rows = 10, cols = 1003;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::mt19937 gen(41);
  std::uniform_int_distribution<int> pick(-1000, 1000);
  V v(std::size_t(rows * cols));
  for (double& x : v) x = pick(gen) / 8.0;
  auto at = [&](std::int64_t r, std::int64_t c) -> double& { return v[std::size_t(r * cols + c)]; };
  at(1, 700) = nan;  // the first NaN wins, in a later block
  at(1, 900) = nan;
  at(2, 300) = inf;  // the first of equal infinities
  at(2, 800) = inf;
  at(2, 500) = -inf;
  at(3, 130) = 500;  // a tie across blocks: the first index
  at(3, 770) = 500;
  at(3, 131) = -500;
  at(3, 771) = -500;
  at(4, 990) = nan;  // in the last block
  at(5, 0) = nan;
  for (std::int64_t c = 0; c < cols; ++c) at(6, c) = 2;
  at(7, 1002) = 1000;  // the last element
  at(8, 64) = 400;     // a block's first element, beaten later by one in the same block
  at(8, 127) = 450;
  at(9, 1001) = nan;  // after the last block
  at(9, 1000) = 300;
  // numpy's rule: the first NaN, else the first extreme.
  auto want = [&](const V& x, bool max) {
    std::vector<std::int64_t> w;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      std::int64_t best = 0;
      for (std::int64_t c = 1; c < cols && !std::isnan(row[best]); ++c) {
        if (std::isnan(row[c]) || (max ? row[c] > row[best] : row[c] < row[best])) best = c;
      }
      w.push_back(best);
    }
    return w;
  };
  for (nf::DType t : {nf::f16, nf::f32, nf::f64, nf::i32, nf::i64}) {
    INFO(nf::name(t));
    V x = v;
    // Integers hold no NaN or infinity: those rows take finite stand-ins.
    if (t == nf::i32 || t == nf::i64) {
      for (double& e : x) e = std::isfinite(e) ? e * 8 : (std::isnan(e) ? 7777 : 9999);
    }
    const Array a = nf::array(x, {rows, cols}).astype(t);
    CHECK(Array(nf::argmax(a, 1)).to_vector<std::int64_t>() == want(x, true));
    CHECK(Array(nf::argmin(a, 1)).to_vector<std::int64_t>() == want(x, false));
  }
}
