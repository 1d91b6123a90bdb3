// The disk layer of the kernel cache: round trips, entries that are truncated,
// corrupt, foreign or misplaced, concurrent writers (threads and processes),
// unusable directories and the environment that places the cache.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compile/disk_cache.hpp"
#include "compile/runtime_source.hpp"
#include "compile/warning.hpp"
#include "numfuse/errors.hpp"

#include "../temp_dir.hpp"

namespace fs = std::filesystem;
using nf::jit::DiskCache;
using nf::jit::KernelImage;
using nf::jit::StoredKernel;
using nf::test::TempDir;

namespace {

std::string key_of(int i) {
  return nf::jit::image_key("source " + std::to_string(i), "sm_80");
}

StoredKernel kernel_of(int i, std::size_t size = 64) {
  StoredKernel kernel{{"sm_80", true, {}}, "// source " + std::to_string(i) + "\n"};
  for (std::size_t j = 0; j < size; ++j) {
    kernel.image.data.push_back(static_cast<char>(i * 31 + j * 7));
  }
  return kernel;
}

bool same(const std::optional<KernelImage>& a, const KernelImage& b) {
  return a && a->arch == b.arch && a->cubin == b.cubin && a->data == b.data;
}

bool same(const std::optional<KernelImage>& a, const StoredKernel& b) {
  return same(a, b.image);
}

std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

fs::path entry_file(const DiskCache& cache, const std::string& key) {
  return cache.dir() / (key + ".nfk");
}

std::size_t temp_files(const fs::path& dir) {
  std::size_t count = 0;
  for (const auto& item : fs::directory_iterator(dir)) count += item.path().extension() == ".tmp";
  return count;
}

// What `run` printed on std::cerr, where numfuse's warnings go.
template <class F>
std::string captured_stderr(F&& run) {
  std::ostringstream captured;
  std::streambuf* const saved = std::cerr.rdbuf(captured.rdbuf());
  try {
    run();
  } catch (...) {
    std::cerr.rdbuf(saved);
    throw;
  }
  std::cerr.rdbuf(saved);
  return captured.str();
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

bool all_valid(DiskCache& cache) {
  const DiskCache::Verification v = cache.verify();
  return v.removed.empty() && v.kept.empty();
}

// Runs `child` in a forked process as a user who cannot write `dir` (which
// it makes read-only): root, who writes anywhere, becomes nobody. Returns
// the child's exit status and what it wrote on stderr.
template <class F>
std::pair<int, std::string> as_reader_of(const fs::path& dir, F&& child) {
  fs::permissions(dir, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  const fs::path log = dir.parent_path() / (dir.filename().string() + ".stderr");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, 2) < 0) ::_exit(90);
    constexpr uid_t kNobody = 65534;
    if (::geteuid() == 0 && (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) ::_exit(91);
    try {
      ::_exit(child());
    } catch (...) {
      ::_exit(92);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  fs::permissions(dir, fs::perms::owner_write, fs::perm_options::add);
  std::ifstream file(log);
  std::string text{std::istreambuf_iterator<char>(file), {}};
  fs::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace

TEST_CASE("image keys are 32 hex digits and change with source and arch", "[host][jit]") {
  const std::string key = nf::jit::image_key("source", "sm_80");
  CHECK(key.size() == 32);
  CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(nf::jit::image_key("source", "sm_80") == key);
  CHECK(nf::jit::image_key("source ", "sm_80") != key);
  CHECK(nf::jit::image_key("source", "sm_90") != key);
}

TEST_CASE("the disk cache returns what it stored, cubin and PTX", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  REQUIRE(cache.enabled());
  CHECK(cache.disabled_reason().empty());
  const StoredKernel cubin = kernel_of(1);
  const StoredKernel ptx{{"compute_120", false, {'.', 'v', 'e', 'r', '\0'}}, "// ptx\n"};
  const StoredKernel empty{{"sm_90", true, {}}, ""};
  cache.store(key_of(1), cubin);
  cache.store(key_of(2), ptx);
  cache.store(key_of(3), empty);
  CHECK(same(cache.load(key_of(1)), cubin));
  CHECK(same(cache.load(key_of(2)), ptx));
  CHECK(same(cache.load(key_of(3)), empty));
  CHECK_FALSE(cache.load(key_of(4)));
  // The source comes back too, for inspection.
  const auto read = cache.read(key_of(2));
  REQUIRE(std::holds_alternative<StoredKernel>(read));
  CHECK(std::get<StoredKernel>(read).source == ptx.source);
  CHECK(same(std::get<StoredKernel>(read).image, ptx));
  CHECK(std::get<std::string>(cache.read(key_of(4))) == "no such entry");
  // Another cache on the same directory (another process) sees them too.
  DiskCache other(dir.path());
  CHECK(same(other.load(key_of(1)), cubin));

  const std::vector<DiskCache::Entry> entries = cache.entries();
  REQUIRE(entries.size() == 3);
  for (const DiskCache::Entry& entry : entries) {
    CHECK(entry.bytes == fs::file_size(entry_file(cache, entry.key)));
  }
  CHECK(temp_files(dir.path()) == 0);
  CHECK(all_valid(cache));
  const DiskCache::Removal removal = cache.clear();
  CHECK(removal.removed.size() == 3);
  CHECK(removal.kept.empty());
  CHECK(cache.entries().empty());
  CHECK_FALSE(cache.load(key_of(1)));
}

TEST_CASE("a truncated entry is a miss, and says what is wrong", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path(), nf::jit::Warnings::off);
  const std::string key = key_of(1);
  cache.store(key, kernel_of(1));
  const fs::path path = entry_file(cache, key);
  const std::uintmax_t size = fs::file_size(path);
  for (std::uintmax_t length : {std::uintmax_t{0}, std::uintmax_t{7}, std::uintmax_t{24},
                                std::uintmax_t{40}, size / 2, size - 1}) {
    cache.store(key, kernel_of(1));
    fs::resize_file(path, length);
    CHECK_FALSE(cache.load(key));
    CHECK(std::holds_alternative<std::string>(cache.read(key)));
  }
  fs::resize_file(path, 20);
  CHECK(std::get<std::string>(cache.read(key)) == "truncated (20 bytes)");
  cache.store(key, kernel_of(1));
  CHECK(same(cache.load(key), kernel_of(1)));
}

TEST_CASE("a changed byte anywhere in an entry makes it a miss", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path(), nf::jit::Warnings::off);
  const std::string key = key_of(1);
  cache.store(key, kernel_of(1));
  const fs::path path = entry_file(cache, key);
  const std::vector<char> good = read_bytes(path);
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    write_bytes(path, bad);
    CHECK_FALSE(cache.load(key));
  }
  write_bytes(path, good);
  CHECK(same(cache.load(key), kernel_of(1)));
}

TEST_CASE("garbage, directories and entries of another key are misses", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path(), nf::jit::Warnings::off);
  write_bytes(entry_file(cache, key_of(1)), {'n', 'o', 't', ' ', 'a', 'n', ' ', 'e', 'n', 't'});
  CHECK_FALSE(cache.load(key_of(1)));
  CHECK_THAT(std::get<std::string>(cache.read(key_of(1))),
             Catch::Matchers::Contains("not a numfuse cache entry"));

  cache.store(key_of(2), kernel_of(2));
  fs::copy_file(entry_file(cache, key_of(2)), entry_file(cache, key_of(3)));
  CHECK_FALSE(cache.load(key_of(3)));
  CHECK_THAT(std::get<std::string>(cache.read(key_of(3))),
             Catch::Matchers::Contains("another key (" + key_of(2) + ")"));
  CHECK(same(cache.load(key_of(2)), kernel_of(2)));

  // A directory at an entry's name blocks that entry alone.
  fs::create_directories(entry_file(cache, key_of(4)) / "inside");
  CHECK_FALSE(cache.load(key_of(4)));
  CHECK_NOTHROW(cache.store(key_of(4), kernel_of(4)));
  CHECK(cache.writable());
  cache.store(key_of(5), kernel_of(5));
  CHECK(same(cache.load(key_of(5)), kernel_of(5)));
}

TEST_CASE("verify removes and names bad entries; clear removes leftover temporaries",
          "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  cache.store(key_of(1), kernel_of(1));
  cache.store(key_of(2), kernel_of(2));
  fs::resize_file(entry_file(cache, key_of(2)), 10);
  write_bytes(dir.path() / ("." + key_of(3) + ".123.0.tmp"), {'x'});
  write_bytes(dir.path() / ".probe.123.0.tmp", {});
  write_bytes(dir.path() / "unrelated.txt", {'x'});
  const DiskCache::Verification v = cache.verify();
  CHECK(v.valid == 1);
  REQUIRE(v.removed.size() == 1);
  CHECK(v.removed[0].key == key_of(2));
  CHECK(v.removed[0].problem == "truncated (10 bytes)");
  CHECK(v.kept.empty());
  REQUIRE(cache.entries().size() == 1);
  const DiskCache::Removal removal = cache.clear();
  CHECK(removal.removed.size() == 3);
  CHECK(removal.kept.empty());
  CHECK(fs::exists(dir.path() / "unrelated.txt"));
  CHECK(temp_files(dir.path()) == 0);
}

TEST_CASE("clear and verify report what they could not remove", "[host][jit]") {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  {
    DiskCache cache(cache_dir);
    cache.store(key_of(1), kernel_of(1));
    cache.store(key_of(2), kernel_of(2));
    fs::resize_file(entry_file(cache, key_of(2)), 10);
  }
  const auto [status, log] = as_reader_of(cache_dir, [&] {
    DiskCache cache(cache_dir, nf::jit::Warnings::off);
    const DiskCache::Verification v = cache.verify();
    if (v.valid != 1 || !v.removed.empty() || v.kept.size() != 1) return 1;
    if (v.kept[0].file != entry_file(cache, key_of(2))) return 2;
    const DiskCache::Removal r = cache.clear();
    if (!r.removed.empty() || r.kept.size() != 2) return 3;
    for (const DiskCache::Failure& f : r.kept)
      std::cerr << f.file.string() << ": " << f.reason << "\n";
    return 0;
  });
  CHECK(status == 0);
  CHECK(count_of(log, "Permission denied") == 2);
  CHECK(fs::exists(cache_dir / (key_of(1) + ".nfk")));
  CHECK(fs::exists(cache_dir / (key_of(2) + ".nfk")));
}

TEST_CASE("concurrent writers and readers never see a torn entry", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  const std::string shared = key_of(0);
  const StoredKernel big = kernel_of(0, 1 << 16);
  std::atomic<bool> stored{false};
  std::atomic<int> bad_reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < 20; ++n) {
        cache.store(shared, big);
        stored = true;
        cache.store(key_of(100 * (t + 1) + n), kernel_of(t));
      }
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int n = 0; n < 200; ++n) {
        const bool was_stored = stored;
        const std::optional<KernelImage> image = cache.load(shared);
        if (image ? !same(image, big) : was_stored) ++bad_reads;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(bad_reads == 0);
  CHECK(cache.enabled());
  CHECK(cache.entries().size() == 1 + 4 * 20);
  CHECK(all_valid(cache));
  CHECK(temp_files(dir.path()) == 0);
}

TEST_CASE("concurrent writer processes leave only whole entries", "[host][jit]") {
  TempDir dir;
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      DiskCache cache(dir.path());
      for (int n = 0; n < 20; ++n) {
        cache.store(key_of(0), kernel_of(0, 1 << 16));
        cache.store(key_of(100 * (p + 1) + n), kernel_of(p));
      }
      ::_exit(cache.enabled() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  DiskCache cache(dir.path());
  CHECK(cache.entries().size() == 1 + 4 * 20);
  CHECK(all_valid(cache));
  CHECK(same(cache.load(key_of(0)), kernel_of(0, 1 << 16)));
  CHECK(temp_files(dir.path()) == 0);
}

TEST_CASE("an unusable cache directory turns the disk cache off without throwing", "[host][jit]") {
  TempDir dir;
  const fs::path file = dir.path() / "a-file";
  write_bytes(file, {'x'});

  SECTION("a directory under a file, which even root cannot create") {
    DiskCache cache(file / "cache");
    CHECK_FALSE(cache.enabled());
    CHECK(cache.disabled_reason().find((file / "cache").string()) != std::string::npos);
    CHECK_NOTHROW(cache.store(key_of(1), kernel_of(1)));
    CHECK_FALSE(cache.load(key_of(1)));
  }
  SECTION("a file where the directory should be") {
    DiskCache cache(file);
    CHECK_FALSE(cache.enabled());
    CHECK_FALSE(cache.disabled_reason().empty());
  }
  SECTION("a directory that breaks after the cache started") {
    const fs::path broken = dir.path() / "broken";
    DiskCache cache(broken, nf::jit::Warnings::off);
    REQUIRE(cache.writable());
    fs::remove(broken);
    write_bytes(broken, {'x'});
    CHECK_NOTHROW(cache.store(key_of(1), kernel_of(1)));
    CHECK_FALSE(cache.writable());
    CHECK(cache.read_only_reason().find(broken.string()) != std::string::npos);
    CHECK_NOTHROW(cache.store(key_of(2), kernel_of(2)));
  }
}

TEST_CASE("a read-only cache directory is read; writes stop with one warning", "[host][jit]") {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "shared";
  {
    DiskCache cache(cache_dir);
    cache.store(key_of(1), kernel_of(1));
  }
  const auto [status, log] = as_reader_of(cache_dir, [&] {
    DiskCache cache(cache_dir);
    if (!cache.enabled() || cache.writable()) return 1;
    if (cache.read_only_reason().find(cache_dir.string()) == std::string::npos) return 2;
    if (!same(cache.load(key_of(1)), kernel_of(1))) return 3;
    for (int i = 2; i < 6; ++i) cache.store(key_of(i), kernel_of(i));
    if (cache.load(key_of(2))) return 4;
    return same(cache.load(key_of(1)), kernel_of(1)) ? 0 : 5;
  });
  CHECK(status == 0);
  CHECK(count_of(log, "numfuse: ") == 1);
  CHECK(count_of(log, "kernel disk cache " + cache_dir.string() + " is read-only here") == 1);
  CHECK(temp_files(cache_dir) == 0);
}

TEST_CASE("writes that start failing (a full disk) stop with one warning; reads go on",
          "[host][jit]") {
  TempDir dir;
  DiskCache writer(dir.path());
  writer.store(key_of(1), kernel_of(1));
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Files may not grow past 0 bytes: every write fails, for root too.
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit none{0, 0};
    std::ostringstream captured;
    std::cerr.rdbuf(captured.rdbuf());
    DiskCache cache(dir.path());
    bool ok = cache.writable() && ::setrlimit(RLIMIT_FSIZE, &none) == 0;
    for (int i = 2; i < 6; ++i) cache.store(key_of(i), kernel_of(i));
    ok = ok && !cache.writable() && !cache.load(key_of(2));
    ok = ok && same(cache.load(key_of(1)), kernel_of(1));
    ok = ok && count_of(captured.str(), "numfuse: ") == 1 &&
         count_of(captured.str(), "is read-only here (cannot write") == 1;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(temp_files(dir.path()) == 0);
  CHECK(writer.entries().size() == 1);
}

TEST_CASE("a cache with no directory is off and quiet", "[host][jit]") {
  DiskCache cache{fs::path()};
  CHECK_FALSE(cache.enabled());
  CHECK(cache.disabled_reason().empty());
  cache.store(key_of(1), kernel_of(1));
  CHECK_FALSE(cache.load(key_of(1)));
  CHECK(cache.entries().empty());
}

TEST_CASE("the environment places the cache or turns it off", "[host][jit]") {
  using nf::jit::cache_dir_from;
  using Env = nf::jit::CacheEnvironment;
  CHECK(cache_dir_from(Env{"", "", "", "/home/u"}) == "/home/u/.cache/numfuse");
  CHECK(cache_dir_from(Env{"", "", "/xdg", "/home/u"}) == "/xdg/numfuse");
  CHECK(cache_dir_from(Env{"", "/nf", "/xdg", "/home/u"}) == "/nf");
  for (const char* on : {"on", "1", "TRUE", "yes"}) {
    CHECK(cache_dir_from(Env{on, "/nf", "/xdg", "/home/u"}) == "/nf");
  }
  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    CHECK(cache_dir_from(Env{off, "/nf", "/xdg", "/home/u"}).empty());
  }
  CHECK_THROWS_AS(cache_dir_from(Env{"maybe", "/nf", "", ""}), nf::ValueError);
  CHECK_THROWS_WITH(cache_dir_from(Env{"maybe", "/nf", "", ""}),
                    Catch::Matchers::Contains("NF_CACHE=maybe is not allowed: expected on or off"));
}

TEST_CASE("warnings print once per kind, prefixed", "[host][jit]") {
  std::ostringstream captured;
  std::streambuf* const saved = std::cerr.rdbuf(captured.rdbuf());
  const bool first = nf::jit::warn_once("test-kind", "first");
  const bool second = nf::jit::warn_once("test-kind", "second");
  std::cerr.rdbuf(saved);
  CHECK(first);
  CHECK_FALSE(second);
  CHECK(captured.str() == "numfuse: first\n");
}

TEST_CASE("a warm disk cache compiles nothing", "[host][jit]") {
  TempDir dir;
  const std::string source = std::string(nf::jit::runtime_prelude()) +
                             "extern \"C\" __global__ void nf_copy(float* o, const float* i) {\n"
                             "  o[threadIdx.x] = i[threadIdx.x];\n"
                             "}\n";
  DiskCache cold(dir.path());
  const std::uint64_t before = nf::jit::compile_stats().compiles;
  const KernelImage compiled = nf::jit::obtain_image(source, "sm_80", cold);
  CHECK(nf::jit::compile_stats().compiles == before + 1);
  DiskCache warm(dir.path());  // as a fresh process would open it
  const std::uint64_t loads = nf::jit::disk_cache_loads();
  CHECK(same(nf::jit::obtain_image(source, "sm_80", warm), compiled));
  CHECK(nf::jit::compile_stats().compiles == before + 1);
  CHECK(nf::jit::disk_cache_loads() == loads + 1);
  // The entry keeps the source it was compiled from.
  const auto stored = warm.read(nf::jit::image_key(source, "sm_80"));
  REQUIRE(std::holds_alternative<StoredKernel>(stored));
  CHECK(std::get<StoredKernel>(stored).source == source);
}

TEST_CASE("a truncated, corrupt or foreign entry is skipped with a warning and recompiled",
          "[host][jit]") {
  TempDir dir;
  const std::string source = std::string(nf::jit::runtime_prelude()) +
                             "extern \"C\" __global__ void nf_twice(float* o) {\n"
                             "  o[threadIdx.x] *= 2.0f;\n"
                             "}\n";
  DiskCache cache(dir.path());
  const KernelImage compiled = nf::jit::obtain_image(source, "sm_80", cache);
  const fs::path path = entry_file(cache, nf::jit::image_key(source, "sm_80"));
  const std::vector<char> good = read_bytes(path);
  std::string problem;
  SECTION("truncated") {
    fs::resize_file(path, good.size() / 2);
    problem = "corrupt or truncated";
  }
  SECTION("corrupt") {
    std::vector<char> bad = good;
    bad[bad.size() - 10] ^= 1;
    write_bytes(path, bad);
    problem = "corrupt or truncated";
  }
  SECTION("foreign") {
    write_bytes(path, {'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n'});
    problem = "not a numfuse cache entry";
  }
  const std::uint64_t compiles = nf::jit::compile_stats().compiles;
  const std::uint64_t loads = nf::jit::disk_cache_loads();
  KernelImage again;
  const std::string log =
      captured_stderr([&] { again = nf::jit::obtain_image(source, "sm_80", cache); });
  CHECK(same(again, compiled));
  CHECK(nf::jit::compile_stats().compiles == compiles + 1);
  CHECK(nf::jit::disk_cache_loads() == loads);
  CHECK(count_of(log, "numfuse: skipped the kernel cache entry " + path.string()) == 1);
  CHECK(count_of(log, problem) == 1);
  // The recompiled kernel replaced the bad entry.
  CHECK(std::holds_alternative<StoredKernel>(cache.read(nf::jit::image_key(source, "sm_80"))));
  CHECK(same(cache.load(nf::jit::image_key(source, "sm_80")), compiled));
}
