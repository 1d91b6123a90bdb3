// The learned filters of a layer as a picture: each hidden unit's weights to
// the 28 x 28 pixels as a tile, scaled to its own range, tiles on a grid with
// a 1-pixel border; written with libpng's simplified API.
#pragma once

#include <png.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace example {

// w: the (784, hidden) weights in C order; the first cols * rows units drawn.
inline bool write_filters_png(const std::string& path, const std::vector<float>& w,
                              std::int64_t hidden, int cols, int rows) {
  constexpr int kSide = 28, kCell = kSide + 1;
  const int width = cols * kCell + 1, height = rows * kCell + 1;
  std::vector<unsigned char> pixels(std::size_t(width) * height, 0);
  for (int t = 0; t < cols * rows && t < hidden; ++t) {
    float lo = w[std::size_t(t)], hi = lo;
    for (int p = 0; p < kSide * kSide; ++p) {
      const float v = w[std::size_t(p * hidden + t)];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = hi > lo ? 255.f / (hi - lo) : 0.f;
    const int x0 = (t % cols) * kCell + 1, y0 = (t / cols) * kCell + 1;
    for (int p = 0; p < kSide * kSide; ++p) {
      const float v = (w[std::size_t(p * hidden + t)] - lo) * scale;
      pixels[std::size_t(y0 + p / kSide) * width + x0 + p % kSide] = (unsigned char)(v + 0.5f);
    }
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = png_uint_32(width);
  image.height = png_uint_32(height);
  image.format = PNG_FORMAT_GRAY;
  return png_image_write_to_file(&image, path.c_str(), 0, pixels.data(), 0, nullptr) != 0;
}

}  // namespace example
