#include "compile/manifest.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>

#include "compile/file_writes.hpp"
#include "compile/runtime_source.hpp"
#include "compile/warning.hpp"
#include "core/config.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kKernelV1 = "numfuse-kernel 1";
constexpr std::string_view kKernel = "numfuse-kernel 2";
constexpr std::string_view kRuntime = "numfuse-runtime 2";
constexpr std::string_view kNoRuntime = "none";

std::string runtime_record(std::string_view runtime, const std::string& hash) {
  std::ostringstream o;
  o << kRuntime << "\nruntime-xxh64: " << hash << "\nsource-bytes: " << runtime.size() << "\n"
    << runtime << "\n";
  return o.str();
}

std::string kernel_record(const ManifestEntry& e, const std::string& runtime_hash,
                          std::string_view body) {
  std::ostringstream o;
  o << kKernel << "\nname: " << e.name << "\narch: " << e.arch << "\nsignature: " << e.signature
    << "\nruntime-xxh64: " << runtime_hash << "\nsource-xxh64: " << source_hash(e.source)
    << "\nsource-bytes: " << body.size() << "\n"
    << body << "\n";
  return o.str();
}

// Reads a manifest field by field; every complaint names the file and line.
class Parser {
 public:
  Parser(fs::path path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}

  bool done() const { return pos_ >= text_.size(); }

  std::string line() {
    if (done()) fail("the file ends inside a record");
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string::npos) end = text_.size();
    std::string out = text_.substr(pos_, end - pos_);
    pos_ = std::min(end + 1, text_.size());
    ++line_;
    return out;
  }

  std::string field(const std::string& name) {
    const std::string l = line();
    const std::string prefix = name + ": ";
    if (l.rfind(prefix, 0) != 0) fail("expected \"" + prefix + "...\", found \"" + l + "\"");
    return l.substr(prefix.size());
  }

  // "source-bytes: N", the N bytes and the empty line that ends a record.
  std::string body() {
    const std::string size = field("source-bytes");
    std::size_t n = 0;
    try {
      std::size_t used = 0;
      n = std::stoull(size, &used);
      if (used != size.size()) throw std::invalid_argument(size);
    } catch (const std::exception&) {
      fail("source-bytes is \"" + size + "\", not a count");
    }
    if (text_.size() - pos_ < n) fail("the source is cut short");
    std::string out = text_.substr(pos_, n);
    for (char c : out) line_ += c == '\n';
    pos_ += n;
    if (!line().empty()) fail("expected the empty line that ends a record");
    return out;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(path_.string() + ":" + std::to_string(std::max(line_, 1)) +
                     ": not a numfuse kernel manifest: " + what);
  }

 private:
  fs::path path_;
  std::string text_;
  std::size_t pos_ = 0;
  int line_ = 0;  // the last line read, from 1
};

// One record as written: a kernel's source is the runtime's text (looked up
// by runtime_hash) and then the body; a runtime's is the body.
struct Record {
  bool runtime = false;
  ManifestEntry entry;       // name, arch and signature of a kernel
  std::string runtime_hash;  // the runtime a kernel starts with, or kNoRuntime
  std::string source_hash;   // of a kernel's whole source
  std::string body;
};

Record parse_record(Parser& p) {
  const std::string start = p.line();
  Record r;
  if (start == kRuntime) {
    r.runtime = true;
    r.runtime_hash = p.field("runtime-xxh64");
    r.body = p.body();
    return r;
  }
  if (start != kKernel && start != kKernelV1) {
    p.fail("expected \"" + std::string(kKernel) + "\" or \"" + std::string(kRuntime) + "\"");
  }
  r.entry.name = p.field("name");
  r.entry.arch = p.field("arch");
  r.entry.signature = p.field("signature");
  // Version 1 kept each kernel's whole source, runtime and all.
  r.runtime_hash = start == kKernel ? p.field("runtime-xxh64") : std::string(kNoRuntime);
  r.source_hash = p.field("source-xxh64");
  r.body = p.body();
  return r;
}

std::string kernel_key(const std::string& arch, const std::string& hash) {
  return arch + " " + hash;
}

// What this process knows of a manifest file it appends to: the kernels and
// runtimes of its first `scanned` bytes. Other processes append too, so each
// append reads what they added since, under the file's lock.
struct KnownFile {
  dev_t device = 0;
  ino_t inode = 0;
  off_t scanned = 0;
  std::set<std::string> kernels;  // kernel_key
  std::set<std::string> runtimes;
};

void catch_up(KnownFile& known, int fd, const fs::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return;
  if (info.st_dev != known.device || info.st_ino != known.inode || info.st_size < known.scanned) {
    known = KnownFile();
    known.device = info.st_dev;
    known.inode = info.st_ino;
  }
  if (info.st_size == known.scanned) return;
  std::string text(static_cast<std::size_t>(info.st_size - known.scanned), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + done, text.size() - done, known.scanned + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  Parser parser(path, std::move(text));
  while (!parser.done()) {
    const Record r = parse_record(parser);
    if (r.runtime) {
      known.runtimes.insert(r.runtime_hash);
    } else {
      known.kernels.insert(kernel_key(r.entry.arch, r.source_hash));
    }
  }
  known.scanned += off_t(done);
}

}  // namespace

const fs::path& manifest_path() {
  static const fs::path path = [] {
    return fs::path(config::read(config::Var::kernel_manifest).value_or(""));
  }();
  return path;
}

std::string source_hash(const std::string& source) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(source.data(), source.size())));
  return hex;
}

bool append_manifest(const fs::path& path, const ManifestEntry& entry) {
  static std::mutex mutex;
  static std::map<fs::path, KnownFile> known_files;
  const auto fail = [&](int error) {
    throw Error("cannot append to the kernel manifest " + path.string() + ": " +
                std::generic_category().message(error));
  };
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  const std::lock_guard<std::mutex> lock(mutex);
  // The lock keeps records of processes sharing the file whole even where
  // one write could be split (NFS, a full pipe), and lets each see the
  // others' records before it adds one; closing the file releases it.
  ::flock(fd, LOCK_EX);
  KnownFile& known = known_files[path];
  try {
    catch_up(known, fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  const std::string key = kernel_key(entry.arch, source_hash(entry.source));
  if (known.kernels.count(key)) {
    ::close(fd);
    return false;
  }
  static const std::string_view runtime = runtime_prelude();
  static const std::string hash_of_runtime = source_hash(std::string(runtime));
  const bool has_runtime = !runtime.empty() && entry.source.starts_with(runtime);
  const std::string runtime_hash = has_runtime ? hash_of_runtime : std::string(kNoRuntime);
  std::string text;
  if (has_runtime && !known.runtimes.count(runtime_hash)) {
    text += runtime_record(runtime, runtime_hash);
  }
  text += kernel_record(entry, runtime_hash,
                        std::string_view(entry.source).substr(has_runtime ? runtime.size() : 0));
  if (const int error = write_all_and_close(fd, text.data(), text.size())) fail(error);
  known.kernels.insert(key);
  if (has_runtime) known.runtimes.insert(runtime_hash);
  known.scanned += off_t(text.size());
  return true;
}

void record_kernel(const ManifestEntry& entry) {
  static std::mutex mutex;
  static std::set<std::string> recorded;  // arch + source hash
  static std::atomic<bool> broken{false};
  if (!manifest_on() || broken.load(std::memory_order_relaxed)) return;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!recorded.insert(entry.arch + " " + source_hash(entry.source)).second) return;
  try {
    append_manifest(manifest_path(), entry);
  } catch (const Error& e) {
    broken = true;
    warn_once("manifest", std::string(e.what()) + "; recording stops (NF_KERNEL_MANIFEST)");
  }
}

std::vector<ManifestEntry> read_manifest(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw ValueError("cannot read the kernel manifest " + path.string() + ": " +
                     std::generic_category().message(errno));
  }
  Parser parser(path, std::string(std::istreambuf_iterator<char>(file), {}));
  std::map<std::string, std::string> runtimes;  // by hash
  std::vector<ManifestEntry> entries;
  while (!parser.done()) {
    Record r = parse_record(parser);
    if (r.runtime) {
      runtimes.emplace(r.runtime_hash, std::move(r.body));
      continue;
    }
    ManifestEntry& e = entries.emplace_back(std::move(r.entry));
    if (r.runtime_hash == kNoRuntime) {
      e.source = std::move(r.body);
    } else {
      const auto runtime = runtimes.find(r.runtime_hash);
      if (runtime == runtimes.end()) {
        parser.fail("the kernel " + e.name + " starts with the runtime " + r.runtime_hash +
                    ", which no record before it holds");
      }
      e.source = runtime->second + r.body;
    }
    e.intact = source_hash(e.source) == r.source_hash;
  }
  return entries;
}

}  // namespace nf::jit
