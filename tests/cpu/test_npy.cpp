// nf::save and nf::load: numpy's .npy format byte for byte as numpy 1.24
// writes it, round trips of every dtype, files numpy writes that numfuse
// does not (Fortran order, versions 2.0 and 3.0), and files it must refuse.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <numfuse/numfuse.hpp>

#include "../error_message.hpp"
#include "../temp_dir.hpp"

namespace {

using nf::test::message_of;
using nf::test::TempDir;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A version 1.0 header as numpy writes it: the dict padded with spaces and
// ended by a newline so that the data starts at byte 128.
std::string numpy_header(const std::string& dict) {
  std::string h = dict;
  h.append(128 - 10 - 1 - dict.size(), ' ');
  return std::string("\x93NUMPY\x01\x00", 8) + char(h.size() + 1) + '\0' + h + "\n";
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// Random values of every dtype, never all zeros.
nf::Array random_array(nf::DType t, const nf::Shape& shape) {
  const nf::Expr x = nf::randn(shape, nf::f64) * 100.0;
  if (t == nf::bool_) return nf::Array(x > 0.0);
  if (t == nf::u8) return nf::Array(nf::astype(nf::abs(x), nf::u8));
  return nf::Array(nf::astype(x, t));
}

}  // namespace

TEST_CASE("npy: the bytes numpy.save writes", "[npy]") {
  TempDir dir;
  const std::string path = (dir.path() / "a.npy").string();
  const std::vector<float> values{0.5f, -1.25f, 2.f, 3.75f, -4.f, 5.5f};
  nf::save(path, nf::array(values, nf::Shape{2, 3}));
  CHECK(read_file(path) ==
        numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") +
            bytes_of(values));

  nf::save(path, nf::array(std::vector<double>{2.5}, nf::Shape{}));
  CHECK(read_file(path) == numpy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (), }") +
                               bytes_of(std::vector<double>{2.5}));

  nf::save(path, nf::array(std::vector<bool>{true, false, true}));
  CHECK(read_file(path) ==
        numpy_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }") +
            std::string("\x01\x00\x01", 3));

  nf::save(path, nf::zeros({0, 3}, nf::i64));
  CHECK(read_file(path) ==
        numpy_header("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }"));
}

TEST_CASE("npy: every dtype and rank round trips, views in their logical order", "[npy]") {
  TempDir dir;
  const std::string path = (dir.path() / "a.npy").string();
  for (nf::DType t : nf::all_dtypes) {
    for (const nf::Shape& shape :
         {nf::Shape{}, nf::Shape{7}, nf::Shape{3, 5, 2}, nf::Shape{0, 4}}) {
      INFO(nf::name(t) << " " << nf::to_string(shape));
      const nf::Array a = random_array(t, shape);
      nf::save(path, a);
      const nf::Array b = nf::load(path);
      CHECK(b.dtype() == t);
      CHECK(b.shape() == shape);
      CHECK(b.device() == nf::default_device());
      CHECK(nf::Array(nf::astype(b, nf::f64)).to_vector<double>() ==
            nf::Array(nf::astype(a, nf::f64)).to_vector<double>());
    }
  }
  const nf::Array a = random_array(nf::f32, {4, 6});
  nf::save(path, a.T());
  const nf::Array b = nf::load(path, nf::Device::cpu());
  CHECK(b.shape() == nf::Shape{6, 4});
  CHECK(b.device() == nf::Device::cpu());
  CHECK(b.to_vector<float>() == nf::Array(a.T()).copy().to_vector<float>());
}

TEST_CASE("npy: bf16 is written as numpy writes ml_dtypes.bfloat16, 2-byte void", "[npy]") {
  TempDir dir;
  const std::string path = (dir.path() / "a.npy").string();
  nf::save(path, nf::astype(nf::array(std::vector<float>{1.f, -2.f}), nf::bf16));
  // bf16 is a float32's upper half: 1.0 is 0x3f80, -2.0 0xc000.
  CHECK(read_file(path) ==
        numpy_header("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }") +
            std::string("\x80\x3f\x00\xc0", 4));
  write_file(path, numpy_header("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }") +
                       std::string("\xc0\x3f", 2));
  CHECK(nf::load(path).dtype() == nf::bf16);
  CHECK(nf::load(path).item<float>() == 1.5f);
}

TEST_CASE("npy: Fortran order and headers of versions 2.0 and 3.0, as numpy may write them",
          "[npy]") {
  TempDir dir;
  const std::string path = (dir.path() / "a.npy").string();
  // np.asfortranarray([[1, 2, 3], [4, 5, 6]], dtype='<i4'): stored column by column.
  write_file(path, numpy_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }") +
                       bytes_of(std::vector<std::int32_t>{1, 4, 2, 5, 3, 6}));
  const nf::Array f = nf::load(path);
  CHECK(f.shape() == nf::Shape{2, 3});
  CHECK(f.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  for (char version : {'\x02', '\x03'}) {
    const std::string dict = "{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (2,)}\n";
    std::string bytes = std::string("\x93NUMPY", 6) + version + '\0';
    const auto n = std::uint32_t(dict.size());
    for (int b = 0; b < 4; ++b) bytes += char((n >> (8 * b)) & 0xff);
    // 1.0 and -2.0 as IEEE halves.
    write_file(path, bytes + dict + std::string("\x00\x3c\x00\xc0", 4));
    INFO("version " << int(version));
    CHECK(nf::load(path).dtype() == nf::f16);
    CHECK(nf::Array(nf::astype(nf::load(path), nf::f32)).to_vector<float>() ==
          std::vector<float>{1.f, -2.f});
  }
}

TEST_CASE("npy: files that are not what they say give an IOError naming the file", "[npy]") {
  TempDir dir;
  const std::string path = (dir.path() / "bad.npy").string();
  const std::string f32x4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  const std::string data = bytes_of(std::vector<float>{1.f, 2.f, 3.f, 4.f});
  struct Bad {
    std::string bytes, says;
  };
  const std::vector<Bad> bad{
      {"", "is not a .npy file"},
      {"PK\x03\x04 a zip, as .npz files are", "is not a .npy file"},
      {numpy_header(f32x4) + data.substr(0, 12),
       "is truncated: its shape (4,) of f32 needs 16 bytes"},
      {numpy_header(f32x4).substr(0, 60), "truncated inside its .npy header"},
      {std::string("\x93NUMPY\x04\x00", 8) + numpy_header(f32x4).substr(8), "version 4"},
      {numpy_header("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }") + data,
       "big-endian '>f4'"},
      {numpy_header("{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }") + data,
       "numpy dtype '<c8', which numfuse has not; it reads '<f2', '<f4'"},
      {numpy_header("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (4,), }") + data,
       "structured dtype"},
      {numpy_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }") + data,
       "fortran_order that is neither True nor False"},
      {numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }") + data,
       "negative dim"},
      {numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4, x), }") + data,
       "not an integer"},
      {numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }") +
           data,
       "shape larger than the file"},
      {numpy_header("{'descr': '<f4', 'fortran_order': False, }") + data, "without 'shape'"},
  };
  for (const Bad& b : bad) {
    INFO(b.says);
    write_file(path, b.bytes);
    const std::string m = message_of<nf::IOError>([&] { nf::load(path); });
    CHECK_THAT(m, Catch::Contains(path) && Catch::Contains(b.says));
  }
  const std::string missing = (dir.path() / "missing.npy").string();
  CHECK_THAT(message_of<nf::IOError>([&] { nf::load(missing); }),
             Catch::Contains("cannot open \"" + missing + "\": No such file"));
  const std::string no_dir = (dir.path() / "no" / "a.npy").string();
  CHECK_THAT(message_of<nf::IOError>([&] { nf::save(no_dir, nf::zeros({2})); }),
             Catch::Contains("cannot write \"" + no_dir + "\": No such file"));
}

TEST_CASE("npy: several arrays to a directory and back, names checked", "[npy]") {
  TempDir tmp;
  const std::string dir = (tmp.path() / "weights").string();
  const nf::Array w = nf::randn({3, 4}), b = nf::astype(nf::arange(5), nf::i32);
  const nf::Array h = nf::astype(nf::randn({2, 2}), nf::f16);
  nf::save_dir(dir, {{"w1", w}, {"b1", b}, {"layer.2-h", h.T()}});
  std::filesystem::create_directories(dir + "/not-an-array.npy.d");
  write_file(dir + "/notes.txt", "not an array");
  const std::map<std::string, nf::Array> back = nf::load_dir(dir);
  REQUIRE(back.size() == 3);
  CHECK(back.at("w1").to_vector<float>() == w.to_vector<float>());
  CHECK(back.at("b1").dtype() == nf::i32);
  CHECK(back.at("b1").to_vector<std::int32_t>() == b.to_vector<std::int32_t>());
  CHECK(back.at("layer.2-h").to_vector<float>() == nf::Array(nf::copy(h.T())).to_vector<float>());

  std::string m = message_of<nf::ValueError>([&] { nf::save_dir(dir, {{"../up", w}}); });
  CHECK(m.find("../up") != std::string::npos);
  message_of<nf::ValueError>([&] { nf::save_dir(dir + "/new", {{"ok", w}, {"", w}}); });
  CHECK(!std::filesystem::exists(dir + "/new"));
  m = message_of<nf::IOError>([&] { nf::load_dir(dir + "/missing"); });
  CHECK(m.find("missing") != std::string::npos);
  write_file(dir + "/broken.npy", "\x93NUMPY");
  m = message_of<nf::IOError>([&] { nf::load_dir(dir); });
  CHECK(m.find("broken.npy") != std::string::npos);
}
