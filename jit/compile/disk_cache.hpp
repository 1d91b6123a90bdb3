// The disk layer of the kernel cache: kernel images compiled by any process
// of this user, kept across runs, so a warm start compiles nothing.
//
// An entry is a file <dir>/<key>.nfk (format in cache_entry.hpp). Writers
// write a private temporary file and rename it over the entry, which POSIX
// makes atomic: readers in other processes see the old file, the new one or
// none, never a torn one. Readers check every entry in full and drop bad ones,
// so a crash, a full disk or a stray edit costs one recompilation, never a
// wrong kernel. A directory that cannot be used turns the layer off with one
// warning; numfuse then compiles every kernel once per process.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compile/cache_entry.hpp"
#include "compile/nvrtc_compiler.hpp"

namespace nf::jit {

// The cache key of the image compile(source, arch) would produce: 32 hex
// digits of XXH3-128 over the entry format version, the NVRTC version, the
// compile options, the arch and the source.
std::string image_key(const std::string& source, const std::string& arch);

// The environment variables that place the cache; nullptr means unset.
struct CacheEnvironment {
  const char* nf_cache = nullptr;        // NF_CACHE: "off", "0", "false" or "no" disable it
  const char* nf_cache_dir = nullptr;    // NF_CACHE_DIR
  const char* xdg_cache_home = nullptr;  // XDG_CACHE_HOME
  const char* home = nullptr;            // HOME
  static CacheEnvironment current();
};

// $NF_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/numfuse; empty when
// NF_CACHE turns the cache off, or (with a warning) when no variable is set.
std::filesystem::path cache_dir_from(const CacheEnvironment& env);

class DiskCache {
 public:
  // The process's cache, placed by the environment at first use.
  static DiskCache& instance();

  // Creates `dir` if needed; an empty path makes a disabled cache.
  explicit DiskCache(std::filesystem::path dir);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  const std::filesystem::path& dir() const { return dir_; }
  // Why an unusable directory turned the cache off; empty otherwise.
  std::string disabled_reason() const;

  // The image stored under `key`, or nullopt. A bad entry is removed.
  std::optional<KernelImage> load(const std::string& key);
  // The same, with the source it was compiled from, for inspection.
  std::optional<StoredKernel> read(const std::string& key) const;
  // Never throws for I/O trouble: the first failure warns and disables the
  // cache.
  void store(const std::string& key, const StoredKernel& kernel);

  // For cache management: the entries, by key.
  struct Entry {
    std::string key;
    std::uintmax_t bytes;
  };
  std::vector<Entry> entries() const;
  // Checks every entry; removes the bad ones and returns their keys.
  std::vector<std::string> verify();
  // Removes every entry and leftover temporary file; returns how many.
  std::size_t clear();

 private:
  std::filesystem::path entry_path(const std::string& key) const;
  std::optional<StoredKernel> read_entry(const std::string& key) const;
  void disable(const std::string& reason);

  std::filesystem::path dir_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;  // guards reason_
  std::string reason_;
};

// The whole path of a kernel image: key, disk, else NVRTC and store.
KernelImage obtain_image(const std::string& source, const std::string& arch,
                         DiskCache& cache = DiskCache::instance());

// Images this process has read from a disk cache.
std::uint64_t disk_cache_loads();

}  // namespace nf::jit
