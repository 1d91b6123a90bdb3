// Fashion-MNIST as the examples read it: Debian's dataset-fashion-mnist
// (IDX files, gzip) through nf::load_idx, images as f32 in [0, 1] of shape
// (n, 784) and labels as i64, on the default device.
#pragma once

#include <numfuse/io.hpp>
#include <numfuse/numfuse.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace example {

inline const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The flags every training example takes: --data DIR, --out DIR, --epochs N
// and --quick.
struct TrainingFlags {
  std::string data = kFashionMnistDir;
  std::string out;
  int epochs = 0;
  bool quick = false;

  // Takes argv[i] (and the value after it) where it is one of them, moving
  // i past what it took; false where it is not.
  bool take(int argc, char** argv, int& i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--data" && has_value) {
      data = argv[++i];
    } else if (a == "--out" && has_value) {
      out = argv[++i];
    } else if (a == "--epochs" && has_value) {
      epochs = std::atoi(argv[++i]);
    } else if (a == "--quick") {
      quick = true;
    } else {
      return false;
    }
    return true;
  }
};

struct Split {
  nf::Array images;  // (n, 784) f32 in [0, 1]
  nf::Array labels;  // (n,) i64, the classes 0 .. 9
};

// `part` is "train" (60,000 images) or "t10k" (10,000). Exits with a message
// naming the package where the files are missing.
inline Split load_fashion_mnist(const std::string& dir, const std::string& part) {
  const std::string images = dir + "/" + part + "-images-idx3-ubyte.gz";
  const std::string labels = dir + "/" + part + "-labels-idx1-ubyte.gz";
  for (const std::string& f : {images, labels}) {
    if (!std::filesystem::exists(f)) {
      std::fprintf(stderr,
                   "%s is missing: install Debian's dataset-fashion-mnist "
                   "(apt-get install dataset-fashion-mnist) or pass --data DIR\n",
                   f.c_str());
      std::exit(2);
    }
  }
  const nf::Array raw = nf::load_idx(images);
  const std::int64_t n = raw.shape()[0];
  return {nf::reshape(nf::astype(raw, nf::f32) / 255.0f, {n, 784}),
          nf::astype(nf::load_idx(labels), nf::i64)};
}

}  // namespace example
