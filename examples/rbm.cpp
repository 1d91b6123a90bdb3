// gnumpy's restricted Boltzmann machine, as its report trains it: binary
// hidden units, contrastive divergence with one Gibbs step (CD-1), 784
// visible and 4,096 hidden units, minibatches of 128, learning rate 0.1 and
// momentum 0.9, over the 60,000 Fashion-MNIST training images (pixels in
// [0, 1] taken as probabilities). Prints the reconstruction error and the
// time of each epoch, and writes the first 256 learned filters as a PNG.
//
//   rbm [--data DIR] [--out DIR] [--epochs N] [--hidden N] [--quick]
//
// --quick trains 256 hidden units on 2,000 images for 3 epochs and checks
// that the error falls and the picture is written (CI runs it on the CPU
// backend).
#include <numfuse/numfuse.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fashion_mnist.hpp"
#include "filters_png.hpp"
#include "plot.hpp"

namespace {

struct Options : example::TrainingFlags {
  std::int64_t hidden = 4096;
  Options() {
    out = "rbm-results";
    epochs = 10;
  }
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (o.take(argc, argv, i)) continue;
    if (std::string(argv[i]) == "--hidden" && i + 1 < argc) {
      o.hidden = std::atoll(argv[++i]);
    } else {
      return false;
    }
  }
  return o.epochs > 0 && o.hidden > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: rbm [--data DIR] [--out DIR] [--epochs N] [--hidden N] [--quick]\n");
    return 2;
  }
  if (o.quick) {
    o.hidden = 256;
    o.epochs = 3;
  }
  const float eta = 0.1f, momentum = 0.9f;
  const std::int64_t batch = 128;
  nf::Array data = example::load_fashion_mnist(o.data, "train").images;
  if (o.quick) data = data(nf::slice(0, 2000), nf::all);
  const std::int64_t n = data.shape()[0], batches = n / batch;
  std::printf("device %s, RBM 784 x %lld, CD-1, %lld images in minibatches of %lld\n",
              nf::to_string(nf::default_device()).c_str(), static_cast<long long>(o.hidden),
              static_cast<long long>(n), static_cast<long long>(batch));

  nf::seed(0);
  nf::Array w = nf::randn({784, o.hidden}) * 0.1f;
  nf::Array vb = nf::zeros({784}), hb = nf::zeros({o.hidden});
  nf::Array dw = nf::zeros({784, o.hidden}), dvb = nf::zeros({784}), dhb = nf::zeros({o.hidden});
  std::vector<double> errors;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    nf::Array error = nf::zeros({1, 1});  // a mean over everything keeps both axes
    for (std::int64_t k = 0; k < batches; ++k) {
      const nf::Array v0 = data(nf::slice(k * batch, (k + 1) * batch), nf::all);
      // Up, a sample of the hidden states, down and up again.
      const nf::Array h0 = nf::sigmoid(nf::dot(v0, w) + hb);
      const nf::Array states = nf::bernoulli(h0);  // 1 with probability h0
      const nf::Array v1 = nf::sigmoid(nf::dot(states, w.T()) + vb);
      const nf::Array h1 = nf::sigmoid(nf::dot(v1, w) + hb);
      dw = momentum * dw + eta / batch * (nf::dot(v0.T(), h0) - nf::dot(v1.T(), h1));
      dvb = momentum * dvb + eta / batch * nf::squeeze(nf::sum(v0 - v1, 0));
      dhb = momentum * dhb + eta / batch * nf::squeeze(nf::sum(h0 - h1, 0));
      w += dw;
      vb += dvb;
      hb += dhb;
      error += nf::mean(nf::square(v0 - v1));
    }
    errors.push_back(error.item<double>() / double(batches));  // waits for the epoch's work
    const std::chrono::duration<double> secs = std::chrono::steady_clock::now() - start;
    std::printf("epoch %2d: reconstruction error %.5f (mean squared, per pixel), %.2f s\n", epoch,
                errors.back(), secs.count());
    std::fflush(stdout);  // progress shows as it happens, also in a log file
  }

  std::filesystem::create_directories(o.out);
  const std::string png = o.out + "/filters.png";
  const bool drawn = example::write_filters_png(png, w.to_vector<float>(), o.hidden, 16, 16);
  std::printf("%s %s: the first 256 filters\n", drawn ? "wrote" : "could not write", png.c_str());
  if (o.quick && !(drawn && example::is_png(png) && errors.back() < errors.front())) {
    std::fprintf(stderr, "quick run failed: the error did not fall (%.5f -> %.5f) or no PNG\n",
                 errors.front(), errors.back());
    return 1;
  }
  return drawn ? 0 : 1;
}
