// nf::load_idx: IDX files of every type code and ranks 1 to 3, plain and
// gzipped, read back element by element; files it must refuse; and, where
// Debian's dataset-fashion-mnist is installed, the real test set.
#include <zlib.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"
#include "../temp_dir.hpp"

namespace {

using nf::test::message_of;
using nf::test::TempDir;

// v's sizeof(U) bytes, most significant first, as IDX stores numbers.
template <class U>
std::string big_endian(U v) {
  std::string bytes(sizeof(U), '\0');
  for (std::size_t b = 0; b < sizeof(U); ++b) bytes[sizeof(U) - 1 - b] = char(v >> (8 * b));
  return bytes;
}

// An IDX file: the magic, the type code, the rank, the dims, then `data`.
std::string idx_file(unsigned char code, const std::vector<std::uint32_t>& dims,
                     const std::string& data) {
  std::string bytes{'\0', '\0', char(code), char(dims.size())};
  for (std::uint32_t d : dims) bytes += big_endian(d);
  return bytes + data;
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

void write_gzipped(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

// Both ways a dataset may ship a file, under names that say which.
std::vector<std::string> write_both(const TempDir& dir, const std::string& bytes) {
  const std::string plain = (dir.path() / "a.idx").string();
  const std::string gzipped = (dir.path() / "a.idx.gz").string();
  write_plain(plain, bytes);
  write_gzipped(gzipped, bytes);
  return {plain, gzipped};
}

// Writes `values` as IDX `code` in both forms, each element through
// `encode`, and reads them back as `dtype` of shape `dims`.
template <class T, class Encode>
void check_reads_back(unsigned char code, const std::vector<std::uint32_t>& dims,
                      const std::vector<T>& values, nf::DType dtype, Encode encode) {
  TempDir dir;
  std::string data;
  for (const T& v : values) data += encode(v);
  const nf::Shape shape(dims.begin(), dims.end());
  for (const std::string& path : write_both(dir, idx_file(code, dims, data))) {
    INFO(path);
    const nf::Array a = nf::load_idx(path);
    CHECK(a.dtype() == dtype);
    CHECK(a.shape() == shape);
    CHECK(a.device() == nf::default_device());
    const std::vector<T> back = a.to_vector<T>();
    REQUIRE(back.size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      INFO("element " << i);
      CHECK(back[i] == values[i]);
    }
  }
}

}  // namespace

TEST_CASE("idx: every type code and rank 1 to 3 reads back, gzipped or not", "[idx]") {
  check_reads_back<std::uint8_t>(0x08, {6}, {0, 1, 127, 128, 200, 255}, nf::u8,
                                 [](std::uint8_t v) { return std::string(1, char(v)); });
  check_reads_back<std::int32_t>(0x0C, {2, 3},
                                 {std::numeric_limits<std::int32_t>::min(), -70000, -1, 0,
                                  0x01020304, std::numeric_limits<std::int32_t>::max()},
                                 nf::i32,
                                 [](std::int32_t v) { return big_endian(std::uint32_t(v)); });
  check_reads_back<float>(0x0D, {2, 1, 3}, {0.5f, -1.25f, 3.0e38f, 1.0e-40f, -65504.5f, 7.0f},
                          nf::f32,
                          [](float v) { return big_endian(std::bit_cast<std::uint32_t>(v)); });
  check_reads_back<double>(0x0E, {1, 2, 2}, {3.141592653589793, -2.5e-300, 1e300, -0.1}, nf::f64,
                           [](double v) { return big_endian(std::bit_cast<std::uint64_t>(v)); });
  // numfuse has no i8 or i16: both widen to i32, signs kept.
  check_reads_back<std::int32_t>(0x09, {4}, {-128, -1, 0, 127}, nf::i32,
                                 [](std::int32_t v) { return std::string(1, char(v)); });
  check_reads_back<std::int32_t>(0x0B, {2, 2}, {-32768, -2, 258, 32767}, nf::i32,
                                 [](std::int32_t v) { return big_endian(std::uint16_t(v)); });
}

TEST_CASE("idx: the device asked for, and a dim of 0", "[idx]") {
  TempDir dir;
  const std::string path = (dir.path() / "a.idx").string();
  write_plain(path, idx_file(0x08, {2}, "\x05\x06"));
  const nf::Array a = nf::load_idx(path, nf::Device::cpu());
  CHECK(a.device() == nf::Device::cpu());
  CHECK(a.to_vector<std::uint8_t>() == std::vector<std::uint8_t>{5, 6});
  write_plain(path, idx_file(0x0D, {3, 0}, ""));
  CHECK(nf::load_idx(path).shape() == nf::Shape{3, 0});
}

TEST_CASE("idx: files that are not what they say give an IOError naming the file", "[idx]") {
  TempDir dir;
  struct Bad {
    std::string bytes, says;
  };
  const std::vector<Bad> bad{
      {"", "is truncated: expected 4 bytes of IDX header, found 0"},
      {idx_file(0x08, {6}, "\x01\x02\x03\x04"),
       "is truncated: expected 6 bytes of data (shape (6,) of IDX u8), found 4"},
      {idx_file(0x0D, {2, 3}, std::string(20, '\x01')),
       "is truncated: expected 24 bytes of data (shape (2, 3) of IDX f32), found 20"},
      {idx_file(0x08, {2, 3, 4}, "").substr(0, 12),
       "is truncated: expected 12 bytes of dims (rank 3), found 8"},
      {"\x93NUMPY\x01\x00", "is not an IDX file: it starts with 0x93 0x4E"},
      {idx_file(0x0A, {1}, "\x01"),
       "has IDX type code 0x0A, which is none of 0x08 (u8), 0x09 (i8), 0x0B (i16), 0x0C (i32), "
       "0x0D (f32), 0x0E (f64)"},
      {idx_file(0x0E, {0xffffffff, 0xffffffff, 0xffffffff}, ""),
       "has IDX dims (4294967295, 4294967295, 4294967295) of f64, more than 2^62 bytes"},
  };
  for (const Bad& b : bad) {
    for (const std::string& path : write_both(dir, b.bytes)) {
      INFO(path << ": " << b.says);
      const std::string m = message_of<nf::IOError>([&] { nf::load_idx(path); });
      CHECK_THAT(m, Catch::Contains("\"" + path + "\"") && Catch::Contains(b.says));
    }
  }
  const std::string missing = (dir.path() / "missing.idx.gz").string();
  CHECK_THAT(message_of<nf::IOError>([&] { nf::load_idx(missing); }),
             Catch::Contains("cannot open \"" + missing + "\": No such file"));
}

TEST_CASE("idx: Fashion-MNIST's test set, where dataset-fashion-mnist is installed", "[idx]") {
  const std::filesystem::path dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(dir)) {
    WARN(dir.string() << " is absent (apt-get install dataset-fashion-mnist): not checked");
    return;
  }
  const nf::Array labels = nf::load_idx((dir / "t10k-labels-idx1-ubyte.gz").string());
  CHECK(labels.dtype() == nf::u8);
  CHECK(labels.shape() == nf::Shape{10000});
  // The test set holds each of the 10 classes 1000 times.
  std::vector<int> per_class(256);
  for (std::uint8_t l : labels.to_vector<std::uint8_t>()) ++per_class[l];
  CHECK(std::all_of(per_class.begin(), per_class.begin() + 10, [](int n) { return n == 1000; }));
  CHECK(std::all_of(per_class.begin() + 10, per_class.end(), [](int n) { return n == 0; }));

  const nf::Array images = nf::load_idx((dir / "t10k-images-idx3-ubyte.gz").string());
  CHECK(images.dtype() == nf::u8);
  CHECK(images.shape() == nf::Shape{10000, 28, 28});
}
