// Backprop as the networks numfuse descends from trained it: tanh (or
// sigmoid) hidden units, a softmax output and cross-entropy, minibatches
// with momentum and weight decay,
//
//   dw(t) = -eta dE/dw + alpha dw(t-1) - lambda eta w,
//
// on Fashion-MNIST: the 60,000 training images split into training and
// validation parts, standardised by the training part's per-pixel mean and
// deviation; shuffled minibatches; the learning rate halved when the
// validation loss stalls and training stopped when it stalls longer; then
// the test accuracy of the best epoch's weights. Writes the curves (CSV, a
// gnuplot script, and the PNG it draws where gnuplot is installed) and the
// weights as .npy files.
//
//   mlp [--data DIR] [--out DIR] [--epochs N] [--sigmoid] [--quick]
//       [--eta X] [--momentum X] [--decay X] [--batch N] [--hidden N,N,...]
//       [--bucket-mib X]
//   mlp --check-gradients   backprop against central differences, f64, on the CPU
//
// --quick trains a small net on a subset for a few epochs and checks its
// outcome (CI runs it on the CPU backend).
//
// Under `mpirun -np N` (where numfuse::dist is built) the N processes train
// one net data-parallel, one GPU each: each its share of every minibatch,
// the gradients summed over the processes in buckets of --bucket-mib MiB,
// the figures and files of the lead process. The curves are those of one
// process with the same --batch, up to the order of the sums.
//
//   mpirun -np 2 mlp --batch 1024
#include <numfuse/io.hpp>
#include <numfuse/numfuse.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fashion_mnist.hpp"
#include "plot.hpp"
#include "ranks.hpp"

namespace {

struct Hyper {
  std::vector<std::int64_t> hidden = {2048, 2048};  // units per hidden layer
  std::int64_t batch = 128;                         // images a step, over all processes
  double eta = 0.05;                                // learning rate
  double alpha = 0.9;                               // momentum
  double lambda = 1e-3;                             // weight decay
  int halve_after = 3;  // epochs without a better validation loss before eta halves
  int stop_after = 8;   // and before training stops
};

struct Options : example::TrainingFlags {
  bool sigmoid = false;
  bool check_gradients = false;
  Hyper hp;
  double bucket_mib = 25;  // gradients summed over the processes in buckets of this size
  Options() {
    out = "mlp-results";
    epochs = 60;
  }
};

struct Layer {
  nf::Array w, b;    // (in, out) and (out,)
  nf::Array vw, vb;  // the last updates, which momentum carries on
};

struct Gradient {
  nf::Array w, b;
};

std::vector<Layer> make_net(const std::vector<std::int64_t>& sizes, nf::DType t) {
  std::vector<Layer> net;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::int64_t in = sizes[l], out = sizes[l + 1];
    // Weights of deviation 1/sqrt(fan-in) keep tanh's inputs in its slope.
    net.push_back({nf::randn({in, out}, t) * (1.0 / std::sqrt(double(in))), nf::zeros({out}, t),
                   nf::zeros({in, out}, t), nf::zeros({out}, t)});
  }
  return net;
}

nf::Expr activation(const nf::Expr& z, bool sigmoid) {
  return sigmoid ? nf::sigmoid(z) : nf::tanh(z);
}

// The activation's derivative, from its value h.
nf::Expr slope(const nf::Expr& h, bool sigmoid) {
  return sigmoid ? h * (1 - h) : 1 - h * h;
}

nf::Expr one_hot(const nf::Array& labels, std::int64_t classes, nf::DType t) {
  return nf::astype(nf::reshape(labels, {labels.shape()[0], 1}) == nf::arange(classes), t);
}

// How many rows of logits z have their largest value at the label.
nf::Expr correct(const nf::Array& z, const nf::Array& labels) {
  return nf::sum(nf::squeeze(nf::argmax(z, 1), 1) == labels);
}

// The activations of every layer for inputs x (x first), and the output's
// logits.
struct Pass {
  std::vector<nf::Array> h;
  nf::Array z;
};

Pass forward(const std::vector<Layer>& net, const nf::Array& x, bool sigmoid) {
  Pass p{{x}, {}};
  for (std::size_t l = 0; l + 1 < net.size(); ++l) {
    p.h.push_back(activation(nf::dot(p.h.back(), net[l].w) + net[l].b, sigmoid));
  }
  p.z = nf::dot(p.h.back(), net.back().w) + net.back().b;
  return p;
}

// Cross-entropy of the softmax of z against one-hot y, per example:
// logsumexp(z) - z[label], which never takes the log of 0.
nf::Expr cross_entropy(const nf::Array& z, const nf::Expr& y) {
  return nf::logsumexp(z, 1) - nf::sum(y * z, 1);
}

// dE/dw and dE/db of E = the cross-entropy summed over the rows of p and
// divided by `batch`, layer by layer, last first. Where p holds a process's
// share of the minibatch and `batch` is the whole minibatch's size, the sums
// over the processes that `sum` makes are the gradients of the mean over the
// whole minibatch.
std::vector<Gradient> backward(const std::vector<Layer>& net, const Pass& p, const nf::Expr& y,
                               bool sigmoid, double batch, example::Buckets& sum) {
  std::vector<Gradient> g(net.size());
  nf::Array delta = (nf::exp(p.z - nf::logsumexp(p.z, 1)) - y) / batch;  // softmax - y
  for (std::size_t l = net.size(); l-- > 0;) {
    sum.add(nf::dot(p.h[l].T(), delta), &g[l].w);
    sum.add(nf::squeeze(nf::sum(delta, 0)), &g[l].b);
    if (l > 0) delta = nf::dot(delta, net[l].w.T()) * slope(p.h[l], sigmoid);
  }
  sum.flush();
  return g;
}

void update(std::vector<Layer>& net, const std::vector<Gradient>& g, const Hyper& hp, double eta) {
  for (std::size_t l = 0; l < net.size(); ++l) {
    Layer& L = net[l];
    L.vw = hp.alpha * L.vw - eta * g[l].w - hp.lambda * eta * L.w;
    L.vb = hp.alpha * L.vb - eta * g[l].b;  // biases are not decayed
    L.w += L.vw;
    L.b += L.vb;
  }
}

struct Score {
  double loss = 0, accuracy = 0;
};

// Rows [from, to) of x.
nf::Array rows(const nf::Array& x, std::int64_t from, std::int64_t to) {
  return x.ndim() == 1 ? x(nf::slice(from, to)) : x(nf::slice(from, to), nf::all);
}

// The scalars xs summed over the processes, as the lead process has them,
// so that every process decides alike (to stop, or to halve the rate).
std::vector<double> summed(const std::vector<nf::Expr>& xs, const example::Ranks& ranks) {
  std::vector<nf::Expr> flat;
  for (const nf::Expr& x : xs) flat.push_back(nf::reshape(nf::astype(x, nf::f64), {1}));
  return ranks.agreed(ranks.sum({nf::concatenate(flat)})[0]).to_vector<double>();
}

// Each process scores its share of the rows.
Score evaluate(const std::vector<Layer>& net, const nf::Array& x, const nf::Array& labels,
               bool sigmoid, const example::Ranks& ranks) {
  const auto [first, last] = ranks.share(labels.shape()[0]);
  const nf::Array mine = rows(labels, first, last);
  const Pass p = forward(net, rows(x, first, last), sigmoid);
  const std::vector<double> s = summed(
      {nf::sum(cross_entropy(p.z, one_hot(mine, 10, p.z.dtype()))), correct(p.z, mine)}, ranks);
  const double n = double(labels.shape()[0]);
  return {s[0] / n, s[1] / n};
}

// Element k (C order) of a 1-D or 2-D array set to v.
void set_element(nf::Array& a, std::int64_t k, double v) {
  if (a.ndim() == 1) {
    a(k) = v;
  } else {
    a(k / a.shape()[1], k % a.shape()[1]) = v;
  }
}

// Backprop's gradients of a small f64 net on the CPU against central
// differences of the loss, every weight and bias: the check gnumpy's users
// ran in its float64 emulation.
int check_gradients() {
  nf::set_default_device(nf::Device::cpu());
  nf::seed(3);
  for (bool sigmoid : {false, true}) {
    std::vector<Layer> net = make_net({12, 7, 5, 4}, nf::f64);
    for (Layer& L : net) L.b = nf::randn(L.b.shape(), nf::f64) * 0.1;
    const nf::Array x = nf::randn({6, 12}, nf::f64);
    const nf::Array y = one_hot(nf::array(std::vector<std::int64_t>{0, 3, 1, 2, 2, 0}), 4, nf::f64);
    auto loss = [&] {
      return nf::mean(cross_entropy(forward(net, x, sigmoid).z, y)).item<double>();
    };
    example::Buckets alone(example::Ranks(), 0);
    const std::vector<Gradient> g =
        backward(net, forward(net, x, sigmoid), y, sigmoid, double(x.shape()[0]), alone);
    // Central differences err by eps^2 times the third derivative, and by the
    // loss's rounding (some 1e-16) over 2 eps: at 1e-5 both stay near 1e-10.
    const double eps = 1e-5;
    double worst = 0;
    int checked = 0;
    for (std::size_t l = 0; l < net.size(); ++l) {
      for (auto [param, grad] : {std::pair{&net[l].w, &g[l].w}, std::pair{&net[l].b, &g[l].b}}) {
        const std::vector<double> p = param->to_vector<double>();
        const std::vector<double> a = grad->to_vector<double>();
        for (std::size_t k = 0; k < p.size(); ++k) {
          set_element(*param, std::int64_t(k), p[k] + eps);
          const double up = loss();
          set_element(*param, std::int64_t(k), p[k] - eps);
          const double down = loss();
          set_element(*param, std::int64_t(k), p[k]);
          const double numeric = (up - down) / (2 * eps);
          const double scale = std::max({std::abs(a[k]), std::abs(numeric), 1e-8});
          worst = std::max(worst, std::abs(a[k] - numeric) / scale);
          ++checked;
        }
      }
    }
    std::printf(
        "gradient check (%s units, f64, CPU): %d weights and biases, worst relative "
        "error %.2e\n",
        sigmoid ? "sigmoid" : "tanh", checked, worst);
    if (!(worst < 1e-6)) {
      std::fprintf(stderr, "gradient check failed: worst relative error %.2e >= 1e-6\n", worst);
      return 1;
    }
  }
  return 0;
}

struct Data {
  nf::Array train_x, train_y, val_x, val_y, test_x, test_y;
};

// The splits, standardised by the training part's per-pixel statistics
// (pixels that never vary are left at 0, not divided by 0).
Data load(const Options& o) {
  const example::Split train = example::load_fashion_mnist(o.data, "train");
  const example::Split test = example::load_fashion_mnist(o.data, "t10k");
  const std::int64_t n_train = o.quick ? 2000 : 55000, n_val = o.quick ? 1000 : 5000;
  const std::int64_t n_test = o.quick ? 2000 : 10000;
  Data d{rows(train.images, 0, n_train),
         rows(train.labels, 0, n_train),
         rows(train.images, n_train, n_train + n_val),
         rows(train.labels, n_train, n_train + n_val),
         rows(test.images, 0, n_test),
         rows(test.labels, 0, n_test)};
  const nf::Array mu = nf::mean(d.train_x, 0);
  const nf::Array sd = nf::maximum(nf::std(d.train_x, 0), 1e-2f);
  for (nf::Array* x : {&d.train_x, &d.val_x, &d.test_x}) *x = (*x - mu) / sd;
  return d;
}

int train(const Options& o) {
  const example::Ranks ranks = example::Ranks::from_launch();
  const bool lead = ranks.lead();
  const Data d = load(o);
  Hyper hp = o.hp;
  if (o.quick) {
    hp.hidden = {64};
    hp.batch = 50;
  }
  if (hp.batch < ranks.size()) {
    throw nf::ValueError("--batch " + std::to_string(hp.batch) + " gives some of the " +
                         std::to_string(ranks.size()) + " processes no images");
  }
  std::vector<std::int64_t> sizes{784};
  sizes.insert(sizes.end(), hp.hidden.begin(), hp.hidden.end());
  sizes.push_back(10);
  const int epochs = o.quick ? std::min(o.epochs, 5) : o.epochs;
  nf::seed(1);
  std::vector<Layer> net = make_net(sizes, nf::f32);
  std::vector<Layer> best = net;
  if (lead) {
    std::printf("device %s", nf::to_string(nf::default_device()).c_str());
    if (ranks.size() > 1) std::printf(" and %d more processes", ranks.size() - 1);
    std::printf(", %s units, layers", o.sigmoid ? "sigmoid" : "tanh");
    for (std::int64_t s : sizes) std::printf(" %lld", static_cast<long long>(s));
    std::printf(", %lld training / %lld validation / %lld test images, %lld a minibatch\n",
                static_cast<long long>(d.train_x.shape()[0]),
                static_cast<long long>(d.val_x.shape()[0]),
                static_cast<long long>(d.test_x.shape()[0]), static_cast<long long>(hp.batch));
  }

  const std::string csv_path = o.out + "/curves.csv";
  std::ofstream csv;
  if (lead) {
    std::filesystem::create_directories(o.out);
    csv.open(csv_path);
    csv << "epoch,train_loss,train_accuracy,validation_loss,validation_accuracy,seconds\n";
  }
  const std::int64_t n = d.train_x.shape()[0], batches = n / hp.batch;
  const auto [first, last] = ranks.share(hp.batch);  // this process's rows of a minibatch
  example::Buckets buckets(ranks, std::int64_t(o.bucket_mib * (1 << 20)));
  double eta = hp.eta, best_loss = INFINITY;
  int best_epoch = 0, stalled = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    // The permutation's indices are in range: take need not read them back
    // to check them (clip mode), so nothing waits for the device here.
    const nf::Array order = nf::permutation(n);
    // Reductions keep their axes: sums over everything are (1, 1).
    nf::Array loss_sum = nf::zeros({1, 1}), right = nf::zeros({1, 1}, nf::i64);
    for (std::int64_t k = 0; k < batches; ++k) {
      const nf::Array idx = order(nf::slice(k * hp.batch + first, k * hp.batch + last));
      const nf::Array x = nf::take(d.train_x, idx, 0, nf::TakeMode::clip);
      const nf::Array labels = nf::take(d.train_y, idx, 0, nf::TakeMode::clip);
      const nf::Expr y = one_hot(labels, 10, nf::f32);
      const Pass p = forward(net, x, o.sigmoid);
      loss_sum += nf::sum(cross_entropy(p.z, y));
      right += correct(p.z, labels);
      update(net, backward(net, p, y, o.sigmoid, double(hp.batch), buckets), hp, eta);
    }
    const double seen = double(batches * hp.batch);
    const std::vector<double> sums = summed({loss_sum, right}, ranks);
    const double train_loss = sums[0] / seen, train_acc = sums[1] / seen;
    const std::chrono::duration<double> secs = std::chrono::steady_clock::now() - start;
    const Score val = evaluate(net, d.val_x, d.val_y, o.sigmoid, ranks);
    if (lead) {
      std::printf(
          "epoch %2d: train loss %.4f accuracy %.4f, validation loss %.4f accuracy %.4f, "
          "%.2f s (%.0f images/s), eta %.4f\n",
          epoch, train_loss, train_acc, val.loss, val.accuracy, secs.count(), seen / secs.count(),
          eta);
      csv << epoch << ',' << train_loss << ',' << train_acc << ',' << val.loss << ','
          << val.accuracy << ',' << secs.count() << '\n';
      csv.flush();
      std::fflush(stdout);  // progress shows as it happens, also in a log file
    }
    if (val.loss < best_loss) {
      best_loss = val.loss;
      best_epoch = epoch;
      stalled = 0;
      for (std::size_t l = 0; l < net.size(); ++l) {
        best[l].w = nf::copy(net[l].w);
        best[l].b = nf::copy(net[l].b);
      }
    } else if (++stalled >= hp.stop_after) {
      if (lead) std::printf("validation loss stalled for %d epochs: stopping\n", stalled);
      break;
    } else if (stalled % hp.halve_after == 0) {
      eta /= 2;
    }
  }

  const Score test = evaluate(best, d.test_x, d.test_y, o.sigmoid, ranks);
  if (!lead) return 0;
  std::printf("test accuracy %.4f (loss %.4f) with the weights of epoch %d\n", test.accuracy,
              test.loss, best_epoch);
  std::map<std::string, nf::Array> weights;
  for (std::size_t l = 0; l < best.size(); ++l) {
    weights["w" + std::to_string(l + 1)] = best[l].w;
    weights["b" + std::to_string(l + 1)] = best[l].b;
  }
  nf::save_dir(o.out, weights);  // numpy.load reads each: w1.npy, b1.npy, ...
  const bool plotted = example::plot_curves(o.out, csv_path);
  std::printf("wrote %s/curves.csv%s and the weights (w1.npy ...)\n", o.out.c_str(),
              plotted ? ", curves.png" : " (no gnuplot: curves.gp draws curves.png)");
  if (o.quick) {
    // A small net on 2,000 images: well above chance (0.1) after a few epochs.
    // The PNG is checked where gnuplot is installed (CI's setup installs it);
    // without it the run still checks the training and the CSV.
    const bool ok = test.accuracy > 0.7 && best_epoch > 1 &&
                    (!example::have_gnuplot() || plotted) &&
                    std::filesystem::file_size(csv_path) > 100;
    if (!ok) {
      std::fprintf(stderr, "quick run failed: test accuracy %.3f, best epoch %d, or no PNG/CSV\n",
                   test.accuracy, best_epoch);
      return 1;
    }
  }
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: mlp [--data DIR] [--out DIR] [--epochs N] [--sigmoid] [--quick]\n"
               "           [--eta X] [--momentum X] [--decay X] [--batch N] [--hidden N,N,...]\n"
               "           [--bucket-mib X]\n"
               "       mlp --check-gradients\n"
               "       mpirun -np N mlp ...   (data-parallel over N processes, one GPU each)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (o.take(argc, argv, i)) continue;
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--eta" && has_value) {
      o.hp.eta = std::atof(argv[++i]);
    } else if (a == "--momentum" && has_value) {
      o.hp.alpha = std::atof(argv[++i]);
    } else if (a == "--decay" && has_value) {
      o.hp.lambda = std::atof(argv[++i]);
    } else if (a == "--batch" && has_value) {
      o.hp.batch = std::atoll(argv[++i]);
    } else if (a == "--hidden" && has_value) {
      o.hp.hidden.clear();
      for (const char* p = argv[++i]; *p;) {
        char* end = nullptr;
        o.hp.hidden.push_back(std::strtoll(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (o.hp.hidden.back() < 1) return usage();
      }
    } else if (a == "--bucket-mib" && has_value) {
      o.bucket_mib = std::atof(argv[++i]);
    } else if (a == "--sigmoid") {
      o.sigmoid = true;
    } else if (a == "--check-gradients") {
      o.check_gradients = true;
    } else {
      return usage();
    }
  }
  if (o.epochs < 1 || o.hp.batch < 1 || o.hp.hidden.empty() || !(o.bucket_mib >= 0)) {
    return usage();
  }
  return o.check_gradients ? check_gradients() : train(o);
}
