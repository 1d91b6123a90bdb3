#include "compile/manifest.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>

#include "compile/file_writes.hpp"
#include "compile/warning.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRecordStart = "numfuse-kernel 1";

std::string record_text(const ManifestEntry& e) {
  std::ostringstream o;
  o << kRecordStart << "\nname: " << e.name << "\narch: " << e.arch
    << "\nsignature: " << e.signature << "\nsource-xxh64: " << source_hash(e.source)
    << "\nsource-bytes: " << e.source.size() << "\n"
    << e.source << "\n";
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

  std::string bytes(std::size_t n) {
    if (text_.size() - pos_ < n) fail("the source is cut short");
    std::string out = text_.substr(pos_, n);
    for (char c : out) line_ += c == '\n';
    pos_ += n;
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

ManifestEntry parse_record(Parser& p) {
  if (p.line() != kRecordStart) p.fail("expected \"" + std::string(kRecordStart) + "\"");
  ManifestEntry e;
  e.name = p.field("name");
  e.arch = p.field("arch");
  e.signature = p.field("signature");
  const std::string hash = p.field("source-xxh64");
  const std::string size = p.field("source-bytes");
  std::size_t n = 0;
  try {
    std::size_t used = 0;
    n = std::stoull(size, &used);
    if (used != size.size()) throw std::invalid_argument(size);
  } catch (const std::exception&) {
    p.fail("source-bytes is \"" + size + "\", not a count");
  }
  e.source = p.bytes(n);
  if (!p.line().empty()) p.fail("expected the empty line that ends a record");
  e.intact = source_hash(e.source) == hash;
  return e;
}

}  // namespace

const fs::path& manifest_path() {
  static const fs::path path = [] {
    const char* value = std::getenv("NF_KERNEL_MANIFEST");
    return value && *value ? fs::path(value) : fs::path();
  }();
  return path;
}

std::string source_hash(const std::string& source) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(source.data(), source.size())));
  return hex;
}

void append_manifest(const fs::path& path, const ManifestEntry& entry) {
  const std::string text = record_text(entry);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const auto fail = [&](int error) {
    throw Error("cannot append to the kernel manifest " + path.string() + ": " +
                std::generic_category().message(error));
  };
  if (fd < 0) fail(errno);
  // The lock keeps records of processes sharing the file whole even where
  // one write could be split (NFS, a full pipe); closing the file releases it.
  ::flock(fd, LOCK_EX);
  const int error = write_all_and_close(fd, text.data(), text.size());
  if (error) fail(error);
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
  std::vector<ManifestEntry> entries;
  while (!parser.done()) entries.push_back(parse_record(parser));
  return entries;
}

}  // namespace nf::jit
