// The IDX format of MNIST (yann.lecun.com/exdb/mnist): two zero bytes, a
// type code, the number of dims, each dim as a big-endian u32, then the
// elements in C order, big-endian. Datasets ship it gzipped; zlib's gzread
// reads a gzipped file and a plain one alike.
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/execute.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/io.hpp"

namespace nf {
namespace {

// Each IDX type code, its element's bytes in the file and the dtype that
// holds it here.
struct IdxType {
  unsigned char code;
  const char* name;
  int bytes;
  DType dtype;
};
constexpr IdxType kTypes[] = {{0x08, "u8", 1, u8},   {0x09, "i8", 1, i32},  {0x0B, "i16", 2, i32},
                              {0x0C, "i32", 4, i32}, {0x0D, "f32", 4, f32}, {0x0E, "f64", 8, f64}};

// gzread takes an unsigned int count: large files are read in pieces, and a
// header that claims more than the file holds allocates no more than it read.
constexpr std::int64_t kChunk = std::int64_t(1) << 26;

struct GzClose {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzClose>;

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw IOError("nf::load_idx: \"" + path + "\" " + what);
}

std::string hex(unsigned v) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02X", v);
  return s;
}

std::string known_types() {
  std::string all;
  for (const IdxType& t : kTypes)
    all += (all.empty() ? "" : ", ") + hex(t.code) + " (" + t.name + ")";
  return all;
}

// Up to `n` bytes appended to `out`; fewer only at the end of the file.
std::int64_t read_up_to(gzFile f, const std::string& path, std::vector<unsigned char>& out,
                        std::int64_t n) {
  std::int64_t found = 0;
  while (found < n) {
    const std::int64_t step = std::min(n - found, kChunk);
    const std::size_t at = out.size();
    out.resize(at + std::size_t(step));
    const int got = gzread(f, out.data() + at, unsigned(step));
    if (got < 0) {
      int code = 0;
      bad_file(path, "could not be read: " + std::string(gzerror(f, &code)));
    }
    out.resize(at + std::size_t(got));
    found += got;
    if (got < step) break;
  }
  return found;
}

void read_exactly(gzFile f, const std::string& path, std::vector<unsigned char>& out,
                  std::int64_t n, const std::string& what) {
  const std::int64_t found = read_up_to(f, path, out, n);
  if (found < n) {
    bad_file(path, "is truncated: expected " + std::to_string(n) + " bytes of " + what +
                       ", found " + std::to_string(found));
  }
}

// A big-endian unsigned integer of sizeof(U) bytes at p, whatever the host's order.
template <class U>
U big_endian(const unsigned char* p) {
  U v = 0;
  for (std::size_t b = 0; b < sizeof(U); ++b) v = U(v << 8) | p[b];
  return v;
}

// The file's elements in the dtype that holds them, as host bytes.
template <class Out, class Decode>
std::vector<unsigned char> decoded(const std::vector<unsigned char>& in, int bytes, Decode decode) {
  const std::size_t count = in.size() / std::size_t(bytes);
  std::vector<unsigned char> out(count * sizeof(Out));
  for (std::size_t i = 0; i < count; ++i) {
    const Out v = decode(in.data() + i * std::size_t(bytes));
    std::memcpy(out.data() + i * sizeof(Out), &v, sizeof(Out));
  }
  return out;
}

std::vector<unsigned char> host_elements(const IdxType& t, const std::vector<unsigned char>& in) {
  using P = const unsigned char*;
  switch (t.code) {
    case 0x08:
      return in;
    case 0x09:
      return decoded<std::int32_t>(in, 1, [](P p) { return std::int32_t(std::int8_t(*p)); });
    case 0x0B:
      return decoded<std::int32_t>(
          in, 2, [](P p) { return std::int32_t(std::int16_t(big_endian<std::uint16_t>(p))); });
    case 0x0C:
      return decoded<std::int32_t>(
          in, 4, [](P p) { return std::bit_cast<std::int32_t>(big_endian<std::uint32_t>(p)); });
    case 0x0D:
      return decoded<float>(in, 4,
                            [](P p) { return std::bit_cast<float>(big_endian<std::uint32_t>(p)); });
    default:
      return decoded<double>(
          in, 8, [](P p) { return std::bit_cast<double>(big_endian<std::uint64_t>(p)); });
  }
}

}  // namespace

Array load_idx(const std::string& path, Device device) {
  errno = 0;
  const GzFile f(gzopen(path.c_str(), "rb"));
  // gzopen sets errno where the file cannot be opened; otherwise it failed to allocate.
  if (!f) {
    throw IOError("nf::load_idx: cannot open \"" + path +
                  "\": " + std::strerror(errno ? errno : ENOMEM));
  }
  std::vector<unsigned char> header;
  read_exactly(f.get(), path, header, 4, "IDX header");
  if (header[0] != 0 || header[1] != 0) {
    bad_file(path, "is not an IDX file: it starts with " + hex(header[0]) + " " + hex(header[1]) +
                       ", not the IDX magic 0x00 0x00");
  }
  const IdxType* type = std::find_if(std::begin(kTypes), std::end(kTypes),
                                     [&](const IdxType& t) { return t.code == header[2]; });
  if (type == std::end(kTypes)) {
    bad_file(path, "has IDX type code " + hex(header[2]) + ", which is none of " + known_types());
  }
  const int rank = header[3];
  std::vector<unsigned char> dims;
  read_exactly(f.get(), path, dims, 4 * std::int64_t(rank),
               "dims (rank " + std::to_string(rank) + ")");
  Shape shape;
  for (int d = 0; d < rank; ++d) shape.push_back(big_endian<std::uint32_t>(dims.data() + 4 * d));
  // Past 2^62 bytes the dims, not the file, are wrong: say so before reading.
  constexpr std::int64_t kMaxBytes = std::int64_t(1) << 62;
  std::int64_t count = std::find(shape.begin(), shape.end(), 0) == shape.end() ? 1 : 0;
  for (std::int64_t n : shape) {
    if (count == 0) break;
    if (count > kMaxBytes / type->bytes / n) {
      bad_file(path,
               "has IDX dims " + to_string(shape) + " of " + type->name + ", more than 2^62 bytes");
    }
    count *= n;
  }
  std::vector<unsigned char> data;
  read_exactly(f.get(), path, data, count * type->bytes,
               "data (shape " + to_string(shape) + " of IDX " + type->name + ")");
  Array out = new_array(type->dtype, shape, device);
  copy_to_array(out, host_elements(*type, data).data());
  return out;
}

}  // namespace nf
