// Every GPU of the machine, not only the first: arrays made there, fused
// statements, reductions and cuBLASLt products run there, results read back
// and copied, each checked against the CPU backend. A process of a
// distributed run (numfuse/dist.hpp) drives its rank's GPU, often not cuda:0.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "cuda/devices.hpp"
#include "cuda/memory.hpp"

TEST_CASE("every GPU runs statements, reductions, products and copies of its own arrays", "[gpu]") {
  const nf::Device saved = nf::default_device();
  for (int d = 0; d < nf::cuda::device_count(); ++d) {
    INFO("cuda:" << d);
    const nf::Device gpu{nf::Device::Kind::cuda, d};
    nf::set_default_device(nf::Device::cpu());
    nf::seed(40 + d);
    const nf::Array host = nf::randn({37, 129});
    const nf::Array host_w = nf::randn({129, 17});
    const std::vector<double> want =
        nf::Array(nf::sum(nf::exp(host * 0.25) - host, 1)).to_vector<double>();
    const std::vector<double> want_product = nf::Array(nf::dot(host, host_w)).to_vector<double>();

    nf::set_default_device(gpu);
    const std::size_t in_use = nf::cuda::memory_stats(d).bytes_in_use;
    const nf::Array x = host.to(gpu);
    CHECK(x.device() == gpu);
    CHECK(nf::cuda::memory_stats(d).bytes_in_use > in_use);
    const nf::Array y = nf::sum(nf::exp(x * 0.25) - x, 1);
    CHECK(y.device() == gpu);
    const std::vector<double> got = y.to_vector<double>();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(std::abs(got[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])));
    }
    const std::vector<double> product = nf::Array(nf::dot(x, host_w.to(gpu))).to_vector<double>();
    REQUIRE(product.size() == want_product.size());
    for (std::size_t i = 0; i < product.size(); ++i) {
      CHECK(std::abs(product[i] - want_product[i]) <= 1e-4 * (1 + std::abs(want_product[i])));
    }
    const nf::Array back = y.to(nf::Device::cpu());
    CHECK(back.to_vector<double>() == got);
    const nf::Array copy = y.copy();
    CHECK(copy.to_vector<double>() == got);
  }
  nf::set_default_device(saved);
}
