// numfuse inspect: the source, PTX or SASS of a cached kernel, or of the
// kernels a statement written in a file plans.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <variant>

#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/jit.hpp"
#include "tools/cache_access.hpp"
#include "tools/commands.hpp"
#include "tools/expr_file.hpp"

extern char** environ;

namespace nf::tools {
namespace {

namespace fs = std::filesystem;

fs::path find_cuobjdump() {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');) dirs.emplace_back(dir);
  }
  if (const char* home = std::getenv("CUDA_HOME")) dirs.push_back(fs::path(home) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const fs::path& dir : dirs) {
    const fs::path tool = dir / "cuobjdump";
    if (::access(tool.c_str(), X_OK) == 0) return tool;
  }
  throw Error(
      "cuobjdump not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: "
      "install the CUDA toolkit's binary utilities, or use --ptx");
}

// SASS by cuobjdump, printed as it writes it.
void print_sass(const jit::KernelImage& image) {
  if (!image.cubin) {
    throw Error("this kernel is PTX for " + image.arch +
                ", which the driver compiles when it loads it: there is no SASS to show. "
                "Warm the cache for an arch this NVRTC makes cubins for (numfuse info)");
  }
  const fs::path tool = find_cuobjdump();
  std::string file = (fs::temp_directory_path() / "numfuse-inspect-XXXXXX").string();
  const int fd = ::mkstemp(file.data());
  if (fd < 0)
    throw Error("cannot create a temporary file in " + fs::temp_directory_path().string());
  ::close(fd);
  std::ofstream(file, std::ios::binary)
      .write(image.data.data(), std::streamsize(image.data.size()));
  std::fflush(stdout);
  std::string sass = "-sass";
  char* argv[] = {const_cast<char*>(tool.c_str()), sass.data(), file.data(), nullptr};
  pid_t pid = 0;
  int status = 0;
  const int spawned = ::posix_spawn(&pid, tool.c_str(), nullptr, nullptr, argv, environ);
  if (spawned == 0) ::waitpid(pid, &status, 0);
  fs::remove(file);
  if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(tool.string() + " -sass failed on the kernel's cubin");
  }
}

// Where the kernel begins, after the device runtime every source starts
// with: its first line, "// numfuse <walk> kernel nf_...". The runtime's own
// comments may start with "// numfuse " too.
std::size_t kernel_start(const std::string& source) {
  for (std::size_t at = source.find("// numfuse "); at != std::string::npos;
       at = source.find("// numfuse ", at + 1)) {
    const std::size_t eol = source.find('\n', at);
    const std::string line = source.substr(at, eol - at);
    if (line.find(" kernel nf_") != std::string::npos) return at;
  }
  return 0;
}

void show(const std::string& source, const std::string& arch,
          const std::optional<jit::KernelImage>& image, const CommandLine& line) {
  if (line.has("--ptx")) {
    std::fputs(image && !image->cubin ? std::string(image->data.data()).c_str()
                                      : jit::compile_ptx(source, arch).c_str(),
               stdout);
  } else if (line.has("--sass")) {
    print_sass(image ? *image : jit::compile(source, arch));
  } else if (line.has("--full")) {
    std::fputs(source.c_str(), stdout);
  } else {
    std::fputs(source.substr(kernel_start(source)).c_str(), stdout);
  }
}

// The entry KEY names: a key, a key's first digits, or a kernel's name.
std::string find_entry(const jit::DiskCache& cache, const std::string& wanted) {
  std::vector<std::string> found;
  for (const jit::DiskCache::Entry& entry : cache.entries()) {
    if (entry.key.rfind(wanted, 0) == 0) {
      found.push_back(entry.key);
    } else if (const auto k = cache.read(entry.key);
               std::holds_alternative<jit::StoredKernel>(k) &&
               jit::kernel_name_of(std::get<jit::StoredKernel>(k).source) == wanted) {
      found.push_back(entry.key);
    }
  }
  if (found.empty()) {
    throw Error("no entry of " + cache.dir().string() + " has the key or kernel name \"" + wanted +
                "\" (numfuse cache list shows them)");
  }
  if (found.size() > 1) {
    std::string keys;
    for (const std::string& key : found) keys += (keys.empty() ? "" : ", ") + key;
    throw UsageError("\"" + wanted + "\" names " + std::to_string(found.size()) + " entries (" +
                     keys + "); give more of the key");
  }
  return found[0];
}

int run(const CommandLine& line) {
  if (line.has("--ptx") && line.has("--sass")) throw UsageError("give --ptx or --sass, not both");
  if (line.options.count("--expr-file")) {
    if (!line.positional.empty()) throw UsageError("give a KEY or --expr-file, not both");
    if (line.options.count("--arch")) set_target_arch(line.value("--arch"));
    const std::string file = line.value("--expr-file");
    const std::vector<Statement> statements = read_statement_file(file);
    for (std::size_t s = 0; s < statements.size(); ++s) {
      const Statement& statement = statements[s];
      // A C++ comment, so that the output of one statement still compiles.
      std::printf("%s// %s:%d: %s\n", s ? "\n" : "", file.c_str(), statement.line,
                  statement.text.c_str());
      const Plan plan = nf::plan(statement.results);
      if (line.has("--plan")) std::printf("%s\n", plan.to_string().c_str());
      const std::vector<std::string> sources = plan.sources();
      if (sources.empty()) std::printf("// no kernel: a view, or nothing to compute\n");
      for (std::size_t k = 0; k < sources.size(); ++k) {
        if (k) std::printf("\n");
        show(sources[k], target_arch(), std::nullopt, line);
      }
    }
    return 0;
  }
  if (line.positional.size() != 1) throw UsageError("name one cached kernel, or --expr-file FILE");
  const jit::DiskCache cache(cache_dir(line), jit::Warnings::off);
  const std::string key = find_entry(cache, line.positional[0]);
  const std::variant<jit::StoredKernel, std::string> k = cache.read(key);
  if (const std::string* problem = std::get_if<std::string>(&k)) {
    throw Error("the entry " + key + " is bad: " + *problem + " (numfuse cache verify removes it)");
  }
  const jit::StoredKernel& kernel = std::get<jit::StoredKernel>(k);
  show(kernel.source, kernel.image.arch, kernel.image, line);
  return 0;
}

}  // namespace

Command inspect_command() {
  return {"inspect",
          "the source, PTX or SASS of a cached kernel or of a statement in a file",
          "usage: numfuse inspect KEY [--full | --ptx | --sass] [--cache-dir DIR]\n"
          "       numfuse inspect --expr-file FILE [--arch sm_XX] [--plan]\n"
          "                       [--full | --ptx | --sass]\n"
          "\n"
          "Prints the CUDA source of a kernel in the kernel cache, after the device\n"
          "runtime it includes (--full shows that too). KEY is its key, the\n"
          "first digits of it, or the kernel's name (numfuse cache list shows both).\n"
          "With --expr-file, plans each statement FILE holds, in order, and prints\n"
          "under the statement's line number the source of each kernel it runs, for\n"
          "the target arch. FILE declares inputs and writes statements as in C++; a\n"
          "statement `name = ...` stores its result in `name`, as `nf::Array name =\n"
          "...;` does, and a line that is an expression alone is evaluated:\n"
          "\n"
          "    A: f32[8192, 8192]\n"
          "    A = reciprocal(sqrt(var(A, 1) + 1e-5)) * (A - mean(A, 1))\n"
          "    sum(A, 0)\n"
          "\n"
          "  --full           the whole source NVRTC compiles, device runtime included\n"
          "  --ptx            the PTX instead (NVRTC compiles it for the kernel's arch)\n"
          "  --sass           the SASS of the cubin, by cuobjdump\n"
          "  --arch sm_XX     the arch to generate and compile for (default: NF_TARGET_ARCH,\n"
          "                   else sm_90)\n"
          "  --plan           first, the statement's steps and the bytes each moves\n"
          "  --cache-dir DIR  the cache (default: NF_CACHE_DIR, else $XDG_CACHE_HOME/numfuse,\n"
          "                   else ~/.cache/numfuse)\n",
          {"--expr-file", "--arch", "--cache-dir"},
          {"--ptx", "--sass", "--plan", "--full"},
          1,
          run};
}

}  // namespace nf::tools
