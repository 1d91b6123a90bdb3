// numfuse cache list|stats|verify|clear: the disk cache's entries, checked
// and removed.
#include <cstdio>
#include <map>

#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "tools/cache_access.hpp"
#include "tools/commands.hpp"

namespace nf::tools {
namespace {

int list(const CommandLine& line) {
  const jit::DiskCache cache(cache_dir(line));
  std::printf("%-32s  %-11s  %-5s  %10s  %s\n", "KEY", "ARCH", "KIND", "BYTES", "KERNEL");
  for (const jit::DiskCache::Entry& entry : cache.entries()) {
    const std::optional<jit::StoredKernel> k = cache.read(entry.key);
    if (!k) {
      std::printf("%-32s  (corrupt; removed)\n", entry.key.c_str());
      continue;
    }
    std::printf("%-32s  %-11s  %-5s  %10ju  %s\n", entry.key.c_str(), k->image.arch.c_str(),
                k->image.cubin ? "cubin" : "PTX", entry.bytes,
                jit::kernel_name_of(k->source).c_str());
  }
  return 0;
}

int stats(const CommandLine& line) {
  const jit::DiskCache cache(cache_dir(line));
  std::uintmax_t bytes = 0;
  std::size_t cubins = 0, bad = 0;
  std::map<std::string, std::size_t> by_arch;
  const std::vector<jit::DiskCache::Entry> entries = cache.entries();
  for (const jit::DiskCache::Entry& entry : entries) {
    bytes += entry.bytes;
    const std::optional<jit::StoredKernel> k = cache.read(entry.key);
    if (!k) {
      ++bad;
      continue;
    }
    cubins += k->image.cubin;
    ++by_arch[k->image.arch];
  }
  std::printf("kernel cache %s\n", cache.dir().c_str());
  std::printf("  entries  %zu (%zu cubin, %zu PTX), %s\n", entries.size() - bad, cubins,
              entries.size() - bad - cubins, human_bytes(bytes).c_str());
  for (const auto& [arch, n] : by_arch) std::printf("  %-8s %zu\n", arch.c_str(), n);
  if (bad) std::printf("  removed  %zu corrupt\n", bad);
  return 0;
}

int verify(const CommandLine& line) {
  jit::DiskCache cache(cache_dir(line));
  const std::size_t total = cache.entries().size();
  const std::vector<std::string> bad = cache.verify();
  std::printf("checked %zu entries in %s: %zu valid, %zu corrupt\n", total, cache.dir().c_str(),
              total - bad.size(), bad.size());
  for (const std::string& key : bad) std::printf("  removed %s\n", key.c_str());
  return 0;
}

int clear(const CommandLine& line) {
  jit::DiskCache cache(cache_dir(line));
  const std::size_t removed = cache.clear();
  std::printf("removed %zu files from %s\n", removed, cache.dir().c_str());
  return 0;
}

const char* const kWhere =
    "  --cache-dir DIR  the cache (default: NF_CACHE_DIR, else $XDG_CACHE_HOME/numfuse,\n"
    "                   else ~/.cache/numfuse)\n";

Command cache_subcommand(const char* name, const char* summary, const char* what,
                         int (*run)(const CommandLine&)) {
  return {
      std::string("cache ") + name,
      summary,
      std::string("usage: numfuse cache ") + name + " [--cache-dir DIR]\n\n" + what + "\n" + kWhere,
      {"--cache-dir"},
      {},
      run};
}

}  // namespace

std::vector<Command> cache_commands() {
  return {
      cache_subcommand("list", "the cached kernels: key, arch, cubin or PTX, size, name",
                       "Lists every entry of the kernel cache: its key (for `numfuse inspect`),\n"
                       "the arch it was compiled for, cubin or PTX, its size and the kernel's\n"
                       "name. An entry that fails its check is removed and said so.\n",
                       list),
      cache_subcommand("stats", "entries, bytes and archs of the kernel cache",
                       "Counts the entries of the kernel cache, cubin and PTX, their bytes, and\n"
                       "the entries of each arch.\n",
                       stats),
      cache_subcommand(
          "verify", "check every entry; remove the corrupt ones",
          "Reads every entry in full and checks its header, checksum and key; removes\n"
          "each that fails (a program would recompile it) and names it.\n",
          verify),
      cache_subcommand("clear", "remove every entry and leftover temporary file",
                       "Removes every entry of the kernel cache, and temporary files that\n"
                       "interrupted writers left. Other files in the directory stay.\n",
                       clear),
  };
}

}  // namespace nf::tools
