// The disk layer of the kernel cache: kernel images compiled by any process
// of this user, kept across runs, so a warm start compiles nothing.
//
// An entry is a file <dir>/<key>.nfk (format in cache_entry.hpp). Writers
// write a private temporary file and rename it over the entry, which POSIX
// makes atomic: readers in other processes see the old file, the new one or
// none, never a torn one. Readers check every entry in full and skip bad ones
// with a warning (and remove them where they may), so a crash, a full disk or
// a stray edit costs one recompilation, never a wrong kernel.
//
// A directory that cannot be written (a shared cache built ahead of time and
// mounted read-only) is still read; only writes stop, with one warning. A
// directory that cannot be made or read turns the layer off, with one
// warning; numfuse then compiles every kernel once per process.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compile/cache_entry.hpp"
#include "compile/nvrtc_compiler.hpp"

namespace nf::jit {

// The cache key of the image compile(source, arch) would produce: 32 hex
// digits of XXH3-128 over the entry format version, the NVRTC version, the
// compile options, the arch and the source.
std::string image_key(const std::string& source, const std::string& arch);

// The environment variables that place the cache; empty means unset.
struct CacheEnvironment {
  std::string nf_cache;        // NF_CACHE: a switch (core/config.hpp)
  std::string nf_cache_dir;    // NF_CACHE_DIR
  std::string xdg_cache_home;  // XDG_CACHE_HOME
  std::string home;            // HOME
  // Throws nf::ValueError when NF_CACHE is not a switch.
  static CacheEnvironment current();
};

// $NF_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/numfuse; empty when
// NF_CACHE turns the cache off, or (with a warning) when no variable is set.
// Throws nf::ValueError when NF_CACHE is not a switch.
std::filesystem::path cache_dir_from(const CacheEnvironment& env);

// Whether a DiskCache prints its warnings: programs' caches do; the tool's
// report the same conditions in their own words.
enum class Warnings { on, off };

class DiskCache {
 public:
  // The process's cache, placed by the environment at first use.
  static DiskCache& instance();

  // Creates `dir` if needed, and tries writing a file in it; an empty path
  // makes a disabled cache.
  explicit DiskCache(std::filesystem::path dir, Warnings warnings = Warnings::on);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // Whether loads read the directory.
  bool enabled() const { return enabled_; }
  // Whether stores write it: false from the start for a read-only
  // directory, and from the first failed write on.
  bool writable() const { return writable_.load(std::memory_order_relaxed); }
  const std::filesystem::path& dir() const { return dir_; }
  // Why an unusable directory turned the cache off; empty otherwise.
  std::string disabled_reason() const;
  // Why writes stopped; empty while they go on.
  std::string read_only_reason() const;

  // The image stored under `key`, or nullopt. A bad entry is skipped with a
  // warning (once per file) and left for the store after its recompilation
  // to replace.
  std::optional<KernelImage> load(const std::string& key);
  // Never throws for I/O trouble: the first failure warns and stops writes.
  void store(const std::string& key, const StoredKernel& kernel);

  // For inspection and cache management, changing nothing: the entry under
  // `key` with the source it was compiled from, else what is wrong with it
  // (or that there is none).
  std::variant<StoredKernel, std::string> read(const std::string& key) const;
  struct Entry {
    std::string key;
    std::uintmax_t bytes;
  };
  // The files named as entries, by key, whatever they hold.
  std::vector<Entry> entries() const;

  // A file the cache tools could not remove, and why.
  struct Failure {
    std::filesystem::path file;
    std::string reason;
  };
  struct BadEntry {
    std::string key;
    std::string problem;  // what read() said
  };
  struct Verification {
    std::size_t valid = 0;
    std::vector<BadEntry> removed;
    std::vector<Failure> kept;  // bad entries that could not be removed
  };
  // Checks every entry in full; removes the bad ones.
  Verification verify();
  struct Removal {
    std::vector<std::filesystem::path> removed;
    std::vector<Failure> kept;
  };
  // Removes every entry and leftover temporary file; other files stay.
  Removal clear();

 private:
  std::filesystem::path entry_path(const std::string& key) const;
  void stop_writes(const std::string& reason);

  std::filesystem::path dir_;
  Warnings warnings_;
  bool enabled_ = false;
  std::atomic<bool> writable_{false};
  mutable std::mutex mutex_;  // guards the reasons
  std::string disabled_reason_;
  std::string read_only_reason_;
};

// The whole path of a kernel image: key, disk, else NVRTC and store.
KernelImage obtain_image(const std::string& source, const std::string& arch,
                         DiskCache& cache = DiskCache::instance());

// Images this process has read from a disk cache.
std::uint64_t disk_cache_loads();

}  // namespace nf::jit
