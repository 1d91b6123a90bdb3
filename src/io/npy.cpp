// numpy's .npy format (numpy/lib/format.py): a magic string, a version, a
// header that is a Python dict literal naming the dtype, the order and the
// shape, then the elements. numfuse reads what numpy.save writes for the
// dtypes numfuse has, and writes what numpy.load reads.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "api/execute.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/io.hpp"

namespace nf {
namespace {

static_assert(std::endian::native == std::endian::little,
              ".npy files are read and written as little-endian, the host's order");

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy pads the header so that the data starts on 64 bytes.
constexpr std::size_t kAlign = 64;
// Version 1.0 counts the header in 2 bytes; 2.0 in 4.
constexpr std::size_t kVersion1Limit = 65535;

// The descr numpy.save writes for each dtype; bf16 as numpy writes
// ml_dtypes.bfloat16, which has no type code of its own.
struct Descr {
  DType dtype;
  std::string_view written;
};
constexpr Descr kDescrs[] = {{f16, "<f2"}, {f32, "<f4"}, {f64, "<f8"},   {i32, "<i4"},
                             {i64, "<i8"}, {u8, "|u1"},  {bool_, "|b1"}, {bf16, "<V2"}};

std::string_view descr_of(DType t) {
  for (const Descr& d : kDescrs)
    if (d.dtype == t) return d.written;
  throw InternalError("nf::save: no .npy descr for dtype " + std::string(name(t)));
}

std::string supported_descrs() {
  std::string all;
  for (const Descr& d : kDescrs) {
    all += all.empty() ? "'" : ", '";
    all += d.written;
    all += "'";
  }
  return all;
}

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw IOError("nf::load: \"" + path + "\" " + what);
}

// The dtype of a descr: byte order '<' or '|' (a 1-byte type has none; '='
// is the host's, little-endian), '>' refused with what to do instead.
DType dtype_of_descr(const std::string& path, const std::string& descr) {
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "u1" && descr.substr(1) != "b1") {
    bad_file(path, "holds big-endian '" + descr +
                       "' elements; numfuse reads little-endian ones: save "
                       "a.astype(a.dtype.newbyteorder('<')) from numpy");
  }
  const std::string code = descr.empty() ? descr : descr.substr(1);
  for (const Descr& d : kDescrs)
    if (code == d.written.substr(1)) return d.dtype;
  bad_file(path, "holds elements of numpy dtype '" + descr + "', which numfuse has not; it reads " +
                     supported_descrs());
}

// The header's dict, as numpy writes it: keys sorted, a trailing ", ",
// padded with spaces for the shape's first dim to grow (numpy's
// GROWTH_AXIS_MAX_DIGITS, 21) and to the alignment, ended by a newline.
std::string header_of(const Array& a) {
  std::string shape = "(";
  for (std::size_t d = 0; d < a.shape().size(); ++d)
    shape += (d ? ", " : "") + std::to_string(a.shape()[d]);
  shape += a.shape().size() == 1 ? ",)" : ")";
  std::string h = "{'descr': '" + std::string(descr_of(a.dtype())) +
                  "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (!a.shape().empty()) h.append(21 - std::to_string(a.shape()[0]).size(), ' ');
  // The magic, the version's 2 bytes and the header's length: 2 bytes in
  // version 1.0, 4 in 2.0.
  auto padding = [&](std::size_t length_bytes) {
    return (kAlign - (kMagic.size() + 2 + length_bytes + h.size() + 1) % kAlign) % kAlign;
  };
  const std::size_t v1 = padding(2);
  h.append(h.size() + v1 + 1 <= kVersion1Limit ? v1 : padding(4), ' ');
  return h + "\n";
}

void write_le(std::ofstream& out, std::uint32_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out.put(char((v >> (8 * b)) & 0xff));
}

// The header dict's parts this reader needs: the value after `key` up to
// the next top-level comma or the dict's end.
std::string dict_value(const std::string& path, const std::string& header, const char* key) {
  std::size_t at = header.find(std::string("'") + key + "'");
  if (at == std::string::npos) at = header.find(std::string("\"") + key + "\"");
  if (at == std::string::npos)
    bad_file(path, "has a .npy header without '" + std::string(key) + "'");
  at = header.find(':', at);
  if (at == std::string::npos) bad_file(path, "has a malformed .npy header: " + header);
  std::size_t end = ++at;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
  }
  const std::size_t first = header.find_first_not_of(' ', at);
  const std::size_t last = header.find_last_not_of(' ', end - 1);
  return first > last ? "" : header.substr(first, last - first + 1);
}

std::string unquoted(const std::string& path, const std::string& v) {
  if (v.size() < 2 || (v.front() != '\'' && v.front() != '"') || v.back() != v.front())
    bad_file(path, "has a .npy descr numfuse cannot read (a structured dtype?): " + v);
  return v.substr(1, v.size() - 2);
}

Shape shape_of(const std::string& path, const std::string& v) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')')
    bad_file(path, "has a .npy shape that is not a tuple: " + v);
  Shape shape;
  std::size_t at = 1;
  while (at < v.size() - 1) {
    const std::size_t comma = std::min(v.find(',', at), v.size() - 1);
    const std::string part = v.substr(at, comma - at);
    at = comma + 1;
    if (part.find_first_not_of(' ') == std::string::npos) continue;
    std::int64_t n = 0;
    try {
      std::size_t used = 0;
      n = std::stoll(part, &used);
      if (part.find_first_not_of(' ', used) != std::string::npos) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      bad_file(path, "has a .npy shape with a dim that is not an integer: " + v);
    }
    if (n < 0) bad_file(path, "has a .npy shape with a negative dim: " + v);
    shape.push_back(n);
  }
  return shape;
}

std::uint32_t read_le(std::ifstream& in, int bytes) {
  std::uint32_t v = 0;
  for (int b = 0; b < bytes; ++b) v |= std::uint32_t(std::uint8_t(in.get())) << (8 * b);
  return v;
}

}  // namespace

void save(const std::string& path, const Array& a) {
  const std::string header = header_of(a);
  std::vector<char> data(std::size_t(a.size()) * itemsize(a.dtype()));
  a.read_into(data.data(), a.dtype());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IOError("nf::save: cannot write \"" + path + "\": " + std::strerror(errno));
  out.write(kMagic.data(), std::streamsize(kMagic.size()));
  const bool v2 = header.size() > kVersion1Limit;
  out.put(v2 ? 2 : 1);
  out.put(0);
  write_le(out, std::uint32_t(header.size()), v2 ? 4 : 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(data.data(), std::streamsize(data.size()));
  out.close();
  if (!out) throw IOError("nf::save: writing \"" + path + "\" failed: " + std::strerror(errno));
}

Array load(const std::string& path, Device device) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IOError("nf::load: cannot open \"" + path + "\": " + std::strerror(errno));
  const auto file_bytes = std::int64_t(in.tellg());
  in.seekg(0);
  std::string magic(kMagic.size(), '\0');
  in.read(magic.data(), std::streamsize(magic.size()));
  if (!in || magic != kMagic) bad_file(path, "is not a .npy file (no \\x93NUMPY at its start)");
  const int major = in.get();
  in.get();
  if (major < 1 || major > 3)
    bad_file(path, "is .npy version " + std::to_string(major) + ", not 1 to 3");
  const std::uint32_t header_bytes = read_le(in, major == 1 ? 2 : 4);
  std::string header(header_bytes, '\0');
  in.read(header.data(), std::streamsize(header_bytes));
  if (!in) bad_file(path, "is truncated inside its .npy header");
  const DType dtype = dtype_of_descr(path, unquoted(path, dict_value(path, header, "descr")));
  const std::string order = dict_value(path, header, "fortran_order");
  if (order != "True" && order != "False")
    bad_file(path, "has a .npy fortran_order that is neither True nor False: " + order);
  const bool fortran = order == "True";
  Shape shape = shape_of(path, dict_value(path, header, "shape"));
  // Fortran order is the reversed shape in C order, transposed.
  if (fortran) std::reverse(shape.begin(), shape.end());
  std::int64_t count = 1;
  for (std::int64_t n : shape) {
    if (n != 0 && count > file_bytes / n) bad_file(path, "has a .npy shape larger than the file");
    count *= n;
  }
  const std::int64_t data_bytes = count * std::int64_t(itemsize(dtype));
  const std::int64_t left = file_bytes - std::int64_t(in.tellg());
  if (left < data_bytes) {
    bad_file(path, "is truncated: its shape " + to_string(shape) + " of " +
                       std::string(name(dtype)) + " needs " + std::to_string(data_bytes) +
                       " bytes of data, the file holds " + std::to_string(left));
  }
  std::vector<char> data(static_cast<std::size_t>(data_bytes));
  in.read(data.data(), std::streamsize(data_bytes));
  if (!in) bad_file(path, "could not be read: " + std::string(std::strerror(errno)));
  Array out = new_array(dtype, shape, device);
  copy_to_array(out, data.data());
  return fortran ? out.transpose().copy() : out;
}

}  // namespace nf
