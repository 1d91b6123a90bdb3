// Data-parallel training of a multilayer perceptron over the ranks of an
// mpirun: samples per second, and the loss of every step, for the same
// global minibatches whatever the number of ranks.
//   mpirun -np 1 build/release/bench/dist_mlp_bench --loss-out one.csv
//   mpirun -np 2 build/release/bench/dist_mlp_bench --loss-out two.csv
//
// The net: 784 inputs, a sigmoid hidden layer, 10 softmax outputs, trained by
// cross-entropy with momentum and weight decay, the update of the backprop
// literature, dw(t) = -lr dE/dw + momentum dw(t-1) - decay lr w. The data is
// synthetic and the same on every rank (DataSet). Each rank takes its rows of
// every global minibatch, and the gradients, each a sum over the rank's rows
// divided by the global batch, are summed over the ranks by one all_reduce
// of them all: the same gradient as one process computes, up to the order of
// its sums.
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <numfuse/dist.hpp>
#include <numfuse/numfuse.hpp>

namespace {

struct Options {
  std::int64_t global_batch = 8192;
  std::int64_t hidden = 4096;
  int steps = 40;
  int warmup = 5;
  double lr = 0.02;
  double momentum = 0.9;
  double decay = 1e-4;
  std::string loss_out;
};

constexpr std::int64_t kInputs = 784;
constexpr std::int64_t kClasses = 10;

struct Layer {
  nf::Array w, b, vw, vb;  // weights, biases, and their last updates

  Layer(std::int64_t in, std::int64_t out, std::uint64_t seed)
      : b(nf::zeros({out})), vw(nf::zeros({in, out})), vb(nf::zeros({out})) {
    nf::seed(seed);
    w = nf::randn({in, out}) * static_cast<float>(1 / std::sqrt(double(in)));
  }

  void update(const nf::Array& gw, const nf::Array& gb, const Options& o) {
    const float lr = float(o.lr), m = float(o.momentum), d = float(o.decay * o.lr);
    const nf::Expr dw = vw * m - gw * lr - w * d;
    const nf::Expr db = vb * m - gb * lr - b * d;
    auto [w2, vw2, b2, vb2] = nf::eval(w + dw, dw, b + db, db);
    w = w2;
    vw = vw2;
    b = b2;
    vb = vb2;
  }
};

// The data set, resident on the device as a loaded one would be, the same on
// every rank: kBatches global minibatches of randn inputs, one-hot labelled
// by a fixed random linear teacher.
constexpr int kBatches = 16;

struct DataSet {
  nf::Array x, y;

  DataSet(std::int64_t rows) {
    nf::seed(13);
    const nf::Array teacher = nf::randn({kInputs, kClasses});
    x = nf::randn({rows, kInputs});
    const nf::Array t = nf::dot(x, teacher);
    y = nf::astype(t == nf::max(t, 1), nf::f32);
  }
};

class Trainer {
 public:
  explicit Trainer(const Options& o)
      : o_(o),
        hidden_(kInputs, o.hidden, 11),
        out_(o.hidden, kClasses, 12),
        data_(o.global_batch * kBatches) {
    const int ranks = nf::dist::size();
    if (o.global_batch % ranks != 0) {
      throw nf::ValueError("the global batch must split evenly over the ranks");
    }
    rows_ = o.global_batch / ranks;
  }

  // One step on this rank's rows of global minibatch `step`; returns the
  // global batch's mean loss, still on the device.
  nf::Array step(int step) {
    const std::int64_t first = (step % kBatches) * o_.global_batch + nf::dist::rank() * rows_;
    const nf::Array x = data_.x(nf::slice(first, first + rows_));
    const nf::Array y = data_.y(nf::slice(first, first + rows_));

    const nf::Array h = nf::sigmoid(nf::dot(x, hidden_.w) + hidden_.b);
    const nf::Array logits = nf::dot(h, out_.w) + out_.b;
    const nf::Array lse = nf::logsumexp(logits, 1);
    const float per_sample = 1.0f / float(o_.global_batch);
    auto [dlogits, loss] = nf::eval((nf::exp(logits - lse) - y) * per_sample,
                                    nf::sum(lse - nf::sum(logits * y, 1)) * per_sample);
    const nf::Array dz = nf::dot(dlogits, out_.w.T()) * h * (1 - h);

    // The gradients and the loss summed over the ranks in one collective.
    const std::vector<nf::Array> g =
        nf::dist::all_reduce({nf::dot(h.T(), dlogits), nf::squeeze(nf::sum(dlogits, 0)),
                              nf::dot(x.T(), dz), nf::squeeze(nf::sum(dz, 0)), loss});
    out_.update(g[0], g[1], o_);
    hidden_.update(g[2], g[3], o_);
    return g[4];
  }

 private:
  Options o_;
  Layer hidden_, out_;
  DataSet data_;
  std::int64_t rows_ = 0;
};

void wait_for_device() {
  const nf::Device d = nf::default_device();
  if (d.kind == nf::Device::Kind::cuda) nf::Array(nf::zeros({1})).item<float>();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--global-batch")
      o.global_batch = std::stoll(value);
    else if (flag == "--hidden")
      o.hidden = std::stoll(value);
    else if (flag == "--steps")
      o.steps = std::stoi(value);
    else if (flag == "--warmup")
      o.warmup = std::stoi(value);
    else if (flag == "--lr")
      o.lr = std::stod(value);
    else if (flag == "--loss-out")
      o.loss_out = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  nf::dist::init();
  const bool lead = nf::dist::rank() == 0;
  Trainer t(o);
  std::vector<nf::Array> losses;
  for (int s = 0; s < o.warmup; ++s) losses.push_back(t.step(s));
  wait_for_device();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = o.warmup; s < o.warmup + o.steps; ++s) losses.push_back(t.step(s));
  wait_for_device();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  double seconds = took.count();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (lead) {
    const double samples = double(o.global_batch) * o.steps;
    std::printf("ranks %d  global batch %lld  hidden %lld  %s: %.3f ms a step, %.0f samples/s\n",
                nf::dist::size(), static_cast<long long>(o.global_batch),
                static_cast<long long>(o.hidden), nf::to_string(nf::default_device()).c_str(),
                seconds * 1e3 / o.steps, samples / seconds);
    std::printf("loss: step 0 %.6f, step %d %.6f\n", losses.front().item<double>(),
                int(losses.size()) - 1, losses.back().item<double>());
    if (!o.loss_out.empty()) {
      std::ofstream f(o.loss_out);
      f << "step,loss\n";
      for (std::size_t s = 0; s < losses.size(); ++s) {
        char loss[32];
        std::snprintf(loss, sizeof loss, "%.9g", losses[s].item<double>());
        f << s << "," << loss << "\n";
      }
    }
  }
  nf::dist::finalize();
  return 0;
}
