// The CPU backend's thread pool: items are taken in runs of consecutive ones
// (guided), and every item must still run exactly once, whatever the count.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cpu/thread_pool.hpp"

TEST_CASE("parallel_for runs every item once, whatever the count", "[cpu-backend]") {
  for (std::int64_t count : {0, 1, 2, 3, 5, 64, 1000, 99991}) {
    INFO("count " << count);
    const auto runs = std::make_unique<std::atomic<int>[]>(std::size_t(count) + 1);
    nf::cpu::parallel_for(count, [&](std::int64_t i) { runs[std::size_t(i)]++; });
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < count; ++i) wrong += runs[std::size_t(i)] != 1;
    CHECK(wrong == 0);
  }
}

TEST_CASE("parallel_for rethrows an item's exception and runs the next call whole",
          "[cpu-backend]") {
  CHECK_THROWS_AS(nf::cpu::parallel_for(10000,
                                        [](std::int64_t i) {
                                          if (i == 4321) throw std::runtime_error("item 4321");
                                        }),
                  std::runtime_error);
  std::atomic<std::int64_t> sum{0};
  nf::cpu::parallel_for(10000, [&](std::int64_t i) { sum += i; });
  CHECK(sum == std::int64_t(10000) * 9999 / 2);
}
