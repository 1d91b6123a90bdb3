// Several arrays as a directory of .npy files, one a name: what numpy users
// get from np.savez without the zip archive, and read with np.load each.
#include <filesystem>
#include <system_error>

#include "numfuse/errors.hpp"
#include "numfuse/io.hpp"

namespace nf {
namespace {

bool file_name_safe(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void save_dir(const std::string& dir, const std::map<std::string, Array>& arrays) {
  for (const auto& [name, a] : arrays) {
    if (!file_name_safe(name)) {
      throw ValueError("nf::save_dir: \"" + name +
                       "\" cannot name a file: use letters, digits, '_', '-' and '.' (not first)");
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IOError("nf::save_dir: cannot make the directory " + dir + ": " + ec.message());
  for (const auto& [name, a] : arrays) save(dir + "/" + name + ".npy", a);
}

std::map<std::string, Array> load_dir(const std::string& dir, Device device) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) throw IOError("nf::load_dir: cannot read the directory " + dir + ": " + ec.message());
  std::map<std::string, Array> out;
  for (const auto& entry : it) {
    const std::filesystem::path& p = entry.path();
    if (p.extension() != ".npy" || !entry.is_regular_file()) continue;
    out.emplace(p.stem().string(), load(p.string(), device));
  }
  return out;
}

}  // namespace nf
