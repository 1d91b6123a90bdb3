#include "tools/cache_access.hpp"

#include <cstdio>

#include "compile/disk_cache.hpp"
#include "numfuse/errors.hpp"

namespace nf::tools {

std::filesystem::path cache_dir(const CommandLine& line) {
  if (line.options.count("--cache-dir")) return line.value("--cache-dir");
  std::filesystem::path dir = jit::cache_dir_from(jit::CacheEnvironment::current());
  if (dir.empty()) {
    throw Error(
        "the kernel cache is off here (NF_CACHE, or no HOME): name a directory with "
        "--cache-dir DIR");
  }
  return dir;
}

std::string human_bytes(std::uintmax_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace nf::tools
