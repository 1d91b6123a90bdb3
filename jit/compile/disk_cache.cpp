#include "compile/disk_cache.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <string_view>
#include <system_error>

#include "compile/cache_entry.hpp"
#include "compile/file_writes.hpp"
#include "compile/warning.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kKeyDigits = 32;
constexpr std::string_view kEntryExtension = ".nfk";
constexpr std::string_view kTempExtension = ".tmp";

std::atomic<std::uint64_t> g_loads{0};

void warn_disabled(const std::string& reason) {
  warn_once("disk-cache", "kernel disk cache off: " + reason +
                              "; kernels are compiled once per process (set NF_CACHE_DIR to a "
                              "writable directory, or NF_CACHE=off to silence this)");
}

bool valid_key(std::string_view key) {
  return key.size() == kKeyDigits && std::all_of(key.begin(), key.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

std::string error_text(int error) {
  return std::generic_category().message(error);
}

// Feeds each field with its length first, so that no two different field
// lists hash the same bytes.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState(), XXH3_freeState) {
    if (!state_) throw std::bad_alloc();
    XXH3_128bits_reset(state_.get());
  }

  void field(std::string_view text) {
    unsigned char size[8];
    for (int i = 0; i < 8; ++i) size[i] = static_cast<unsigned char>(text.size() >> (8 * i));
    XXH3_128bits_update(state_.get(), size, sizeof size);
    XXH3_128bits_update(state_.get(), text.data(), text.size());
  }

  std::string hex() const {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_.get()));
    constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char byte : canonical.digest) {
      out += kDigits[byte >> 4];
      out += kDigits[byte & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
};

bool turns_cache_off(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value == "off" || value == "0" || value == "false" || value == "no";
}

// Our temporary files: ".<key>.<pid>.<n>.tmp".
bool is_temp_name(const std::string& name) {
  return name.size() > kKeyDigits + 1 && name[0] == '.' &&
         valid_key(std::string_view(name).substr(1, kKeyDigits)) && name.ends_with(kTempExtension);
}

}  // namespace

std::string image_key(const std::string& source, const std::string& arch) {
  KeyHasher hasher;
  hasher.field(std::to_string(kEntryFormatVersion));
  hasher.field(nvrtc_version());
  const std::vector<std::string> options = compile_options(arch);
  hasher.field(std::to_string(options.size()));
  for (const std::string& option : options) hasher.field(option);
  hasher.field(arch);
  hasher.field(source);
  return hasher.hex();
}

CacheEnvironment CacheEnvironment::current() {
  return {std::getenv("NF_CACHE"), std::getenv("NF_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
          std::getenv("HOME")};
}

fs::path cache_dir_from(const CacheEnvironment& env) {
  const auto set = [](const char* value) { return value != nullptr && *value != '\0'; };
  if (set(env.nf_cache) && turns_cache_off(env.nf_cache)) return {};
  if (set(env.nf_cache_dir)) return env.nf_cache_dir;
  if (set(env.xdg_cache_home)) return fs::path(env.xdg_cache_home) / "numfuse";
  if (set(env.home)) return fs::path(env.home) / ".cache" / "numfuse";
  warn_disabled("none of NF_CACHE_DIR, XDG_CACHE_HOME and HOME is set");
  return {};
}

DiskCache& DiskCache::instance() {
  static DiskCache cache(cache_dir_from(CacheEnvironment::current()));
  return cache;
}

DiskCache::DiskCache(fs::path dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  std::error_code error;
  if (fs::path absolute = fs::absolute(dir_, error); !error) dir_ = std::move(absolute);
  fs::create_directories(dir_, error);
  // Root passes access() on a read-only directory; its first store then fails
  // and disables the cache instead.
  if (error) {
    reason_ = "cannot create " + dir_.string() + ": " + error.message();
  } else if (!fs::is_directory(dir_, error)) {
    reason_ = dir_.string() + " is not a directory";
  } else if (::access(dir_.c_str(), W_OK | X_OK) != 0) {
    reason_ = "cannot write to " + dir_.string() + ": " + error_text(errno);
  }
  if (reason_.empty()) {
    enabled_ = true;
  } else {
    warn_disabled(reason_);
  }
}

std::string DiskCache::disabled_reason() const {
  const std::lock_guard lock(mutex_);
  return reason_;
}

void DiskCache::disable(const std::string& reason) {
  {
    const std::lock_guard lock(mutex_);
    if (!enabled_.exchange(false)) return;
    reason_ = reason;
  }
  warn_disabled(reason);
}

fs::path DiskCache::entry_path(const std::string& key) const {
  if (!valid_key(key)) throw InternalError("not a kernel cache key: \"" + key + "\"");
  return dir_ / (key + std::string(kEntryExtension));
}

std::optional<StoredKernel> DiskCache::read_entry(const std::string& key) const {
  const fs::path path = entry_path(key);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return std::nullopt;
  const std::streamoff size = file.tellg();
  if (size < 0) return std::nullopt;
  std::vector<char> bytes(static_cast<std::size_t>(size));
  file.seekg(0);
  if (!file.read(bytes.data(), size)) return std::nullopt;
  std::optional<StoredKernel> kernel = decode_entry(key, bytes);
  // Best effort: a writer may rename a good entry over this path meanwhile,
  // which then costs it one more compilation.
  if (!kernel) {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
  return kernel;
}

std::optional<KernelImage> DiskCache::load(const std::string& key) {
  if (!enabled()) return std::nullopt;
  std::optional<StoredKernel> kernel = read_entry(key);
  if (!kernel) return std::nullopt;
  g_loads.fetch_add(1, std::memory_order_relaxed);
  return std::move(kernel->image);
}

std::optional<StoredKernel> DiskCache::read(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  return read_entry(key);
}

void DiskCache::store(const std::string& key, const StoredKernel& kernel) {
  if (!enabled()) return;
  const fs::path path = entry_path(key);
  const std::vector<char> bytes = encode_entry(key, kernel);

  // O_EXCL makes the name ours alone even where another process has our pid
  // (containers sharing the directory): a taken name is skipped.
  static std::atomic<std::uint64_t> counter{0};
  fs::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    temp = dir_ / ("." + key + "." + std::to_string(::getpid()) + "." +
                   std::to_string(counter.fetch_add(1)) + std::string(kTempExtension));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return disable("cannot create a file in " + dir_.string() + ": " + error_text(errno));

  // No fsync: after a crash a short or empty entry fails its check on load.
  if (const int error = write_all_and_close(fd, bytes.data(), bytes.size())) {
    ::unlink(temp.c_str());
    return disable("cannot write " + temp.string() + ": " + error_text(error));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    // ENOENT: clear() in another process took the temporary file; a lost
    // race, not a broken directory.
    if (error != ENOENT) disable("cannot rename to " + path.string() + ": " + error_text(error));
  }
}

std::vector<DiskCache::Entry> DiskCache::entries() const {
  std::vector<Entry> list;
  if (dir_.empty()) return list;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string key = path.stem().string();
    std::error_code size_error;
    const std::uintmax_t size = it->file_size(size_error);
    if (path.extension() == kEntryExtension && valid_key(key) && !size_error) {
      list.push_back({key, size});
    }
  }
  std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return list;
}

std::vector<std::string> DiskCache::verify() {
  std::vector<std::string> bad;
  for (const Entry& entry : entries()) {
    if (!read_entry(entry.key)) bad.push_back(entry.key);
  }
  return bad;
}

std::size_t DiskCache::clear() {
  std::size_t removed = 0;
  for (const Entry& entry : entries()) {
    std::error_code ignored;
    removed += fs::remove(entry_path(entry.key), ignored);
  }
  if (dir_.empty()) return removed;
  std::vector<fs::path> temps;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    if (is_temp_name(it->path().filename().string())) temps.push_back(it->path());
  }
  for (const fs::path& temp : temps) {
    std::error_code ignored;
    removed += fs::remove(temp, ignored);
  }
  return removed;
}

KernelImage obtain_image(const std::string& source, const std::string& arch, DiskCache& cache) {
  if (!cache.enabled()) return compile(source, arch);
  const std::string key = image_key(source, arch);
  if (std::optional<KernelImage> image = cache.load(key)) return std::move(*image);
  KernelImage image = compile(source, arch);
  cache.store(key, {image, source});
  return image;
}

std::uint64_t disk_cache_loads() {
  return g_loads.load(std::memory_order_relaxed);
}

}  // namespace nf::jit
