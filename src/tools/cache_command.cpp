// numfuse cache list|stats|verify|clear: the disk cache's entries, checked
// and removed.
#include <cstdio>
#include <map>
#include <variant>

#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "tools/cache_access.hpp"
#include "tools/commands.hpp"

namespace nf::tools {
namespace {

int list(const CommandLine& line) {
  const jit::DiskCache cache(cache_dir(line), jit::Warnings::off);
  std::printf("%-32s  %-11s  %-5s  %10s  %s\n", "KEY", "ARCH", "KIND", "BYTES", "KERNEL");
  for (const jit::DiskCache::Entry& entry : cache.entries()) {
    const std::variant<jit::StoredKernel, std::string> k = cache.read(entry.key);
    if (const std::string* problem = std::get_if<std::string>(&k)) {
      std::printf("%-32s  (bad: %s; `numfuse cache verify` removes it)\n", entry.key.c_str(),
                  problem->c_str());
      continue;
    }
    const jit::StoredKernel& kernel = std::get<jit::StoredKernel>(k);
    std::printf("%-32s  %-11s  %-5s  %10ju  %s\n", entry.key.c_str(), kernel.image.arch.c_str(),
                kernel.image.cubin ? "cubin" : "PTX", entry.bytes,
                jit::kernel_name_of(kernel.source).c_str());
  }
  return 0;
}

int stats(const CommandLine& line) {
  const jit::DiskCache cache(cache_dir(line), jit::Warnings::off);
  std::uintmax_t bytes = 0;
  std::size_t cubins = 0, bad = 0;
  std::map<std::string, std::size_t> by_arch;
  const std::vector<jit::DiskCache::Entry> entries = cache.entries();
  for (const jit::DiskCache::Entry& entry : entries) {
    bytes += entry.bytes;
    const std::variant<jit::StoredKernel, std::string> k = cache.read(entry.key);
    if (!std::holds_alternative<jit::StoredKernel>(k)) {
      ++bad;
      continue;
    }
    const jit::KernelImage& image = std::get<jit::StoredKernel>(k).image;
    cubins += image.cubin;
    ++by_arch[image.arch];
  }
  std::printf("kernel cache %s%s\n", cache.dir().c_str(),
              cache.writable() ? "" : (" (read-only: " + cache.read_only_reason() + ")").c_str());
  std::printf("  entries  %zu (%zu cubin, %zu PTX), %s\n", entries.size() - bad, cubins,
              entries.size() - bad - cubins, human_bytes(bytes).c_str());
  for (const auto& [arch, n] : by_arch) std::printf("  %-8s %zu\n", arch.c_str(), n);
  if (bad) std::printf("  bad      %zu (`numfuse cache verify` removes them)\n", bad);
  return 0;
}

// Each file that could not be removed, on stderr; 1 when there was one.
int report_kept(const std::vector<jit::DiskCache::Failure>& kept) {
  for (const jit::DiskCache::Failure& f : kept) {
    std::fprintf(stderr, "numfuse: could not remove %s: %s\n", f.file.c_str(), f.reason.c_str());
  }
  return kept.empty() ? 0 : 1;
}

int verify(const CommandLine& line) {
  jit::DiskCache cache(cache_dir(line), jit::Warnings::off);
  const jit::DiskCache::Verification v = cache.verify();
  const std::size_t bad = v.removed.size() + v.kept.size();
  std::printf("checked %zu entries in %s: %zu valid, %zu corrupt", v.valid + bad,
              cache.dir().c_str(), v.valid, bad);
  if (!v.kept.empty()) std::printf(", %zu of them not removed", v.kept.size());
  std::printf("\n");
  for (const jit::DiskCache::BadEntry& e : v.removed) {
    std::printf("  removed %s: %s\n", e.key.c_str(), e.problem.c_str());
  }
  return report_kept(v.kept);
}

int clear(const CommandLine& line) {
  jit::DiskCache cache(cache_dir(line), jit::Warnings::off);
  const jit::DiskCache::Removal r = cache.clear();
  std::printf("removed %zu files from %s", r.removed.size(), cache.dir().c_str());
  if (!r.kept.empty()) std::printf("; could not remove %zu", r.kept.size());
  std::printf("\n");
  return report_kept(r.kept);
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
      0,
      run};
}

}  // namespace

std::vector<Command> cache_commands() {
  return {
      cache_subcommand("list", "the cached kernels: key, arch, cubin or PTX, size, name",
                       "Lists every entry of the kernel cache: its key (for `numfuse inspect`),\n"
                       "the arch it was compiled for, cubin or PTX, its size and the kernel's\n"
                       "name, or what is wrong with an entry that fails its check.\n",
                       list),
      cache_subcommand("stats", "entries, bytes and archs of the kernel cache",
                       "Counts the entries of the kernel cache, cubin and PTX, their bytes, and\n"
                       "the entries of each arch.\n",
                       stats),
      cache_subcommand(
          "verify", "check every entry; remove the corrupt ones",
          "Reads every entry in full and checks its header, checksum and key; removes\n"
          "each that fails (a program would recompile it) and names it. Exits with 1\n"
          "when one could not be removed (a read-only directory), naming it.\n",
          verify),
      cache_subcommand("clear", "remove every entry and leftover temporary file",
                       "Removes every entry of the kernel cache, and temporary files that\n"
                       "interrupted writers left. Other files in the directory stay. Prints\n"
                       "how many files it removed; exits with 1 when some could not be\n"
                       "removed (a read-only directory), naming each.\n",
                       clear),
  };
}

}  // namespace nf::tools
