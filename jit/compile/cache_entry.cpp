#include "compile/cache_entry.hpp"

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace nf::jit {

namespace {

constexpr char kMagic[8] = {'N', 'F', 'K', 'E', 'R', 'N', 'E', 'L'};
constexpr std::size_t kChecksumOffset = 16;
constexpr std::size_t kChecked = 24;  // the checksum covers bytes from here on

void put(std::vector<char>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A string after its length in `length_bytes` bytes.
void put_string(std::vector<char>& out, const std::string& text, int length_bytes = 2) {
  put(out, text.size(), length_bytes);
  out.insert(out.end(), text.begin(), text.end());
}

std::uint64_t checksum(const std::vector<char>& bytes) {
  return XXH3_64bits(bytes.data() + kChecked, bytes.size() - kChecked);
}

// Reads fields in order; any read past the end fails the whole decode.
class Reader {
 public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}

  std::optional<std::uint64_t> uint(int bytes) {
    if (bytes_.size() - pos_ < static_cast<std::size_t>(bytes)) return std::nullopt;
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += bytes;
    return value;
  }

  std::optional<std::string> string(int length_bytes = 2) {
    const std::optional<std::uint64_t> size = uint(length_bytes);
    if (!size || bytes_.size() - pos_ < *size) return std::nullopt;
    std::string text(bytes_.data() + pos_, *size);
    pos_ += *size;
    return text;
  }

  std::size_t left() const { return bytes_.size() - pos_; }
  std::size_t pos() const { return pos_; }

 private:
  const std::vector<char>& bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<char> encode_entry(const std::string& key, const StoredKernel& kernel) {
  const KernelImage& image = kernel.image;
  std::vector<char> out(kMagic, kMagic + sizeof kMagic);
  put(out, kEntryFormatVersion, 4);
  put(out, image.cubin ? 1 : 0, 4);
  put(out, 0, 8);  // the checksum, filled in last
  put(out, image.data.size(), 8);
  put_string(out, image.arch);
  put_string(out, key);
  put_string(out, kernel.source, 4);
  out.insert(out.end(), image.data.begin(), image.data.end());
  const std::uint64_t sum = checksum(out);
  for (int i = 0; i < 8; ++i) out[kChecksumOffset + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  return out;
}

std::variant<StoredKernel, std::string> decode_entry(const std::string& key,
                                                     const std::vector<char>& bytes) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return "not a numfuse cache entry (no NFKERNEL header)";
  }
  if (bytes.size() < kChecked) return "truncated (" + std::to_string(bytes.size()) + " bytes)";
  Reader reader(bytes);
  reader.uint(sizeof kMagic);
  const auto version = reader.uint(4);
  const auto flags = reader.uint(4);
  const auto sum = reader.uint(8);
  const auto payload_size = reader.uint(8);
  if (version != kEntryFormatVersion) {
    return "an entry of format " + std::to_string(*version) + ", not " +
           std::to_string(kEntryFormatVersion);
  }
  if (sum != checksum(bytes)) return "corrupt or truncated (its checksum does not match)";
  if (flags != 0u && flags != 1u) return "corrupt (unknown flags)";
  std::optional<std::string> arch = reader.string();
  const std::optional<std::string> stored_key = reader.string();
  std::optional<std::string> source = reader.string(4);
  if (!arch || !stored_key || !source || reader.left() != payload_size) {
    return "corrupt (its fields do not add up to its size)";
  }
  if (*stored_key != key) return "the entry of another key (" + *stored_key + ")";
  return StoredKernel{
      KernelImage{std::move(*arch), flags == 1u,
                  std::vector<char>(bytes.begin() + std::ptrdiff_t(reader.pos()), bytes.end())},
      std::move(*source)};
}

}  // namespace nf::jit
