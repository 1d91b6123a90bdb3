#include "compile/warning.hpp"

#include <iostream>
#include <mutex>
#include <set>

namespace nf::jit {

bool warn_once(std::string_view kind, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> printed;
  const std::lock_guard lock(mutex);
  if (!printed.emplace(kind).second) return false;
  // One write per line keeps lines whole when other threads print too.
  std::cerr << ("numfuse: " + message + "\n") << std::flush;
  return true;
}

}  // namespace nf::jit
