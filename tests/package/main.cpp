// A user's program built against the installed numfuse package: the mission
// line on random data, checked in double. Exits non-zero on a wrong result.
#include <numfuse/numfuse.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int rows = 64, cols = 1000;
  nf::Array A = nf::randn({rows, cols}) * 3.0 + 5.0;
  float eps = 1e-5f;
  // The acceptance line, exactly as written there.
  // clang-format off
  A = reciprocal(sqrt(var(A,1)+eps))*(A-mean(A,1));
  // clang-format on

  const std::vector<float> v = A.to_vector<float>();
  if (v.size() != static_cast<std::size_t>(rows) * cols) {
    std::fprintf(stderr, "expected %d elements, got %zu\n", rows * cols, v.size());
    return 1;
  }
  for (int r = 0; r < rows; ++r) {
    const float* row = v.data() + static_cast<std::size_t>(r) * cols;
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += row[c];
    const double mean = sum / cols;
    double sq = 0;
    for (int c = 0; c < cols; ++c) sq += (row[c] - mean) * (row[c] - mean);
    const double var = sq / cols;
    // f32 arithmetic over 1000 elements; a wrong axis or formula is off by O(1).
    if (!(std::abs(mean) < 1e-3 && std::abs(var - 1) < 1e-3)) {
      std::fprintf(stderr, "row %d: mean %g, variance %g; expected 0 and 1\n", r, mean, var);
      return 1;
    }
  }
  std::printf("ok: %d rows normalised to mean 0, variance 1\n", rows);
  return 0;
}
