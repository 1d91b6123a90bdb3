#include "compile/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <system_error>

#include "compile/cache_entry.hpp"
#include "compile/file_writes.hpp"
#include "compile/warning.hpp"
#include "core/config.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kKeyDigits = 32;
constexpr std::string_view kEntryExtension = ".nfk";
constexpr std::string_view kTempExtension = ".tmp";
constexpr std::string_view kProbeName = "probe.";

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

// Our temporary files: ".<key>.<pid>.<n>.tmp", and ".probe.<pid>.<n>.tmp"
// where a process died between writing and removing its probe.
bool is_temp_name(const std::string& name) {
  const std::string_view stem = std::string_view(name).substr(1);
  return name[0] == '.' && name.ends_with(kTempExtension) &&
         ((name.size() > kKeyDigits + 1 && valid_key(stem.substr(0, kKeyDigits))) ||
          stem.starts_with(kProbeName));
}

struct Temp {
  fs::path path;
  int fd = -1;
  int error = 0;  // errno where fd < 0
};

// A new file of ours in `dir`, open for writing. O_EXCL makes the name ours
// alone even where another process has our pid (containers sharing the
// directory): a taken name is skipped.
Temp create_temp(const fs::path& dir, std::string_view stem) {
  static std::atomic<std::uint64_t> counter{0};
  Temp temp;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string name = ".";
    name.append(stem).append(".").append(std::to_string(::getpid()));
    name.append(".").append(std::to_string(counter.fetch_add(1))).append(kTempExtension);
    temp.path = dir / name;
    temp.fd = ::open(temp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (temp.fd >= 0) return temp;
    temp.error = errno;
    if (temp.error != EEXIST) break;
  }
  return temp;
}

struct FileBytes {
  bool missing = false;
  std::string problem;  // why it could not be read, where it could not
  std::vector<char> bytes;
};

FileBytes read_file(const fs::path& path) {
  FileBytes file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    file.missing = errno == ENOENT;
    file.problem = file.missing ? "no such entry" : "cannot open it: " + error_text(errno);
    return file;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    file.problem = "not a regular file";
    return file;
  }
  file.bytes.resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < file.bytes.size()) {
    const ssize_t n = ::read(fd, file.bytes.data() + done, file.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) file.problem = "cannot read it: " + error_text(errno);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  // Shorter than its size said: cut while we read, which the check catches.
  file.bytes.resize(done);
  return file;
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
  const auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  return {config::read(config::Var::cache).value_or(""),
          config::read(config::Var::cache_dir).value_or(""), env("XDG_CACHE_HOME"), env("HOME")};
}

fs::path cache_dir_from(const CacheEnvironment& env) {
  if (!env.nf_cache.empty() && !config::switched_on(config::Var::cache, env.nf_cache)) return {};
  if (!env.nf_cache_dir.empty()) return env.nf_cache_dir;
  if (!env.xdg_cache_home.empty()) return fs::path(env.xdg_cache_home) / "numfuse";
  if (!env.home.empty()) return fs::path(env.home) / ".cache" / "numfuse";
  warn_disabled("none of NF_CACHE_DIR, XDG_CACHE_HOME and HOME is set");
  return {};
}

DiskCache& DiskCache::instance() {
  static DiskCache cache(cache_dir_from(CacheEnvironment::current()));
  return cache;
}

DiskCache::DiskCache(fs::path dir, Warnings warnings) : dir_(std::move(dir)), warnings_(warnings) {
  if (dir_.empty()) return;
  std::error_code error;
  if (fs::path absolute = fs::absolute(dir_, error); !error) dir_ = std::move(absolute);
  fs::create_directories(dir_, error);
  if (error) {
    disabled_reason_ = "cannot create " + dir_.string() + ": " + error.message();
  } else if (!fs::is_directory(dir_, error)) {
    disabled_reason_ = dir_.string() + " is not a directory";
  } else if (::access(dir_.c_str(), R_OK | X_OK) != 0) {
    disabled_reason_ = "cannot read " + dir_.string() + ": " + error_text(errno);
  }
  if (!disabled_reason_.empty()) {
    if (warnings_ == Warnings::on) warn_disabled(disabled_reason_);
    return;
  }
  enabled_ = true;
  // A file written and removed, not access(): root passes access() on a
  // directory it cannot write, such as one on a read-only mount.
  const Temp probe = create_temp(dir_, "probe");
  if (probe.fd < 0) {
    stop_writes("cannot create a file in " + dir_.string() + ": " + error_text(probe.error));
    return;
  }
  ::close(probe.fd);
  ::unlink(probe.path.c_str());
  writable_ = true;
}

std::string DiskCache::disabled_reason() const {
  const std::lock_guard lock(mutex_);
  return disabled_reason_;
}

std::string DiskCache::read_only_reason() const {
  const std::lock_guard lock(mutex_);
  return read_only_reason_;
}

void DiskCache::stop_writes(const std::string& reason) {
  {
    const std::lock_guard lock(mutex_);
    if (!read_only_reason_.empty()) return;
    read_only_reason_ = reason;
    writable_ = false;
  }
  if (warnings_ == Warnings::on) {
    warn_once("disk-cache-read-only " + dir_.string(),
              "kernel disk cache " + dir_.string() + " is read-only here (" + reason +
                  "): kernels found there are used, others are compiled once per process");
  }
}

fs::path DiskCache::entry_path(const std::string& key) const {
  if (!valid_key(key)) throw InternalError("not a kernel cache key: \"" + key + "\"");
  return dir_ / (key + std::string(kEntryExtension));
}

std::variant<StoredKernel, std::string> DiskCache::read(const std::string& key) const {
  if (!enabled_) return std::string("the disk cache is off");
  FileBytes file = read_file(entry_path(key));
  if (!file.problem.empty()) return std::move(file.problem);
  return decode_entry(key, file.bytes);
}

std::optional<KernelImage> DiskCache::load(const std::string& key) {
  if (!enabled_) return std::nullopt;
  const fs::path path = entry_path(key);
  FileBytes file = read_file(path);
  if (file.missing) return std::nullopt;
  std::variant<StoredKernel, std::string> entry =
      file.problem.empty() ? decode_entry(key, file.bytes) : std::move(file.problem);
  if (const std::string* problem = std::get_if<std::string>(&entry)) {
    // Not removed: the store that follows the compilation replaces it
    // atomically, where removing could take a good entry another process
    // renamed there meanwhile.
    if (warnings_ == Warnings::on) {
      warn_once("disk-cache-bad " + path.string(), "skipped the kernel cache entry " +
                                                       path.string() + ": " + *problem +
                                                       "; the kernel is compiled again");
    }
    return std::nullopt;
  }
  g_loads.fetch_add(1, std::memory_order_relaxed);
  return std::move(std::get<StoredKernel>(entry).image);
}

void DiskCache::store(const std::string& key, const StoredKernel& kernel) {
  if (!writable()) return;
  const fs::path path = entry_path(key);
  const std::vector<char> bytes = encode_entry(key, kernel);
  const Temp temp = create_temp(dir_, key);
  if (temp.fd < 0) {
    return stop_writes("cannot create a file in " + dir_.string() + ": " + error_text(temp.error));
  }
  // No fsync: after a crash a short or empty entry fails its check on load.
  if (const int error = write_all_and_close(temp.fd, bytes.data(), bytes.size())) {
    ::unlink(temp.path.c_str());
    return stop_writes("cannot write " + temp.path.string() + ": " + error_text(error));
  }
  if (::rename(temp.path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.path.c_str());
    // ENOENT: clear() in another process took the temporary file, a lost
    // race. EISDIR and the like: something not an entry sits at this one
    // entry's name, which stops no other.
    if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
      if (warnings_ == Warnings::on) {
        warn_once("disk-cache-bad " + path.string(),
                  "cannot store a kernel at " + path.string() + ": " + error_text(error));
      }
    } else if (error != ENOENT) {
      stop_writes("cannot rename to " + path.string() + ": " + error_text(error));
    }
  }
}

std::vector<DiskCache::Entry> DiskCache::entries() const {
  std::vector<Entry> list;
  if (!enabled_) return list;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string key = path.stem().string();
    std::error_code size_error;
    const std::uintmax_t size = it->is_regular_file(size_error) ? it->file_size(size_error) : 0;
    if (path.extension() == kEntryExtension && valid_key(key)) list.push_back({key, size});
  }
  std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return list;
}

DiskCache::Verification DiskCache::verify() {
  Verification result;
  for (const Entry& entry : entries()) {
    std::variant<StoredKernel, std::string> read_back = read(entry.key);
    if (std::holds_alternative<StoredKernel>(read_back)) {
      ++result.valid;
      continue;
    }
    const fs::path path = entry_path(entry.key);
    std::error_code error;
    if (fs::remove(path, error)) {
      result.removed.push_back({entry.key, std::get<std::string>(read_back)});
    } else if (error) {
      result.kept.push_back(
          {path, std::get<std::string>(read_back) + "; cannot remove it: " + error.message()});
    }
  }
  return result;
}

DiskCache::Removal DiskCache::clear() {
  Removal result;
  if (!enabled_) return result;
  std::vector<fs::path> doomed;
  for (const Entry& entry : entries()) doomed.push_back(entry_path(entry.key));
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    if (is_temp_name(it->path().filename().string())) doomed.push_back(it->path());
  }
  if (error) result.kept.push_back({dir_, "cannot list it: " + error.message()});
  for (const fs::path& path : doomed) {
    std::error_code remove_error;
    // false without an error: another process removed it first.
    if (fs::remove(path, remove_error)) {
      result.removed.push_back(path);
    } else if (remove_error) {
      result.kept.push_back({path, remove_error.message()});
    }
  }
  return result;
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
