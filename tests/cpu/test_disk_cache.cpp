// The disk layer of the kernel cache: round trips, entries that are truncated,
// corrupt, foreign or misplaced, concurrent writers (threads and processes),
// unusable directories and the environment that places the cache.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

namespace fs = std::filesystem;
using nf::jit::DiskCache;
using nf::jit::KernelImage;
using nf::jit::StoredKernel;

namespace {

// A fresh directory, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("numfuse-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

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
  const std::optional<StoredKernel> read = cache.read(key_of(2));
  REQUIRE(read);
  CHECK(read->source == ptx.source);
  CHECK(same(read->image, ptx));
  CHECK_FALSE(cache.read(key_of(4)));
  // Another cache on the same directory (another process) sees them too.
  DiskCache other(dir.path());
  CHECK(same(other.load(key_of(1)), cubin));

  const std::vector<DiskCache::Entry> entries = cache.entries();
  REQUIRE(entries.size() == 3);
  for (const DiskCache::Entry& entry : entries) {
    CHECK(entry.bytes == fs::file_size(entry_file(cache, entry.key)));
  }
  CHECK(temp_files(dir.path()) == 0);
  CHECK(cache.verify().empty());
  CHECK(cache.clear() == 3);
  CHECK(cache.entries().empty());
  CHECK_FALSE(cache.load(key_of(1)));
}

TEST_CASE("a truncated entry is a miss and is removed", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  const std::string key = key_of(1);
  cache.store(key, kernel_of(1));
  const fs::path path = entry_file(cache, key);
  const std::uintmax_t size = fs::file_size(path);
  for (std::uintmax_t length : {std::uintmax_t{0}, std::uintmax_t{7}, std::uintmax_t{24},
                                std::uintmax_t{40}, size / 2, size - 1}) {
    cache.store(key, kernel_of(1));
    fs::resize_file(path, length);
    CHECK_FALSE(cache.load(key));
    CHECK_FALSE(fs::exists(path));
  }
}

TEST_CASE("a changed byte anywhere in an entry makes it a miss", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  const std::string key = key_of(1);
  cache.store(key, kernel_of(1));
  const fs::path path = entry_file(cache, key);
  const std::vector<char> good = read_bytes(path);
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    write_bytes(path, bad);
    CHECK_FALSE(cache.load(key));
    CHECK_FALSE(fs::exists(path));
  }
  write_bytes(path, good);
  CHECK(same(cache.load(key), kernel_of(1)));
}

TEST_CASE("garbage and entries of another key are misses", "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  write_bytes(entry_file(cache, key_of(1)), {'n', 'o', 't', ' ', 'a', 'n', ' ', 'e', 'n', 't'});
  CHECK_FALSE(cache.load(key_of(1)));
  CHECK_FALSE(fs::exists(entry_file(cache, key_of(1))));

  cache.store(key_of(2), kernel_of(2));
  fs::copy_file(entry_file(cache, key_of(2)), entry_file(cache, key_of(3)));
  CHECK_FALSE(cache.load(key_of(3)));
  CHECK(same(cache.load(key_of(2)), kernel_of(2)));
}

TEST_CASE("verify removes and names bad entries; clear removes leftover temporaries",
          "[host][jit]") {
  TempDir dir;
  DiskCache cache(dir.path());
  cache.store(key_of(1), kernel_of(1));
  cache.store(key_of(2), kernel_of(2));
  fs::resize_file(entry_file(cache, key_of(2)), 10);
  write_bytes(dir.path() / ("." + key_of(3) + ".123.0.tmp"), {'x'});
  write_bytes(dir.path() / "unrelated.txt", {'x'});
  CHECK(cache.verify() == std::vector<std::string>{key_of(2)});
  REQUIRE(cache.entries().size() == 1);
  CHECK(cache.clear() == 2);
  CHECK(fs::exists(dir.path() / "unrelated.txt"));
  CHECK(temp_files(dir.path()) == 0);
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
  CHECK(cache.verify().empty());
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
  CHECK(cache.verify().empty());
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
  SECTION("a read-only directory (root may still write it)") {
    const fs::path read_only = dir.path() / "read-only";
    fs::create_directory(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec |
                                   fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
    DiskCache cache(read_only);
    CHECK_NOTHROW(cache.store(key_of(1), kernel_of(1)));
    if (::geteuid() != 0) {
      CHECK_FALSE(cache.enabled());
      CHECK_FALSE(cache.disabled_reason().empty());
    }
    CHECK(cache.enabled() == same(cache.load(key_of(1)), kernel_of(1)));
  }
  SECTION("a directory that breaks after the cache started") {
    const fs::path broken = dir.path() / "broken";
    DiskCache cache(broken);
    REQUIRE(cache.enabled());
    fs::remove(broken);
    write_bytes(broken, {'x'});
    CHECK_NOTHROW(cache.store(key_of(1), kernel_of(1)));
    CHECK_FALSE(cache.enabled());
    CHECK(cache.disabled_reason().find(broken.string()) != std::string::npos);
    CHECK_NOTHROW(cache.store(key_of(2), kernel_of(2)));
  }
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
  CHECK(cache_dir_from(Env{nullptr, nullptr, nullptr, "/home/u"}) == "/home/u/.cache/numfuse");
  CHECK(cache_dir_from(Env{nullptr, nullptr, "", "/home/u"}) == "/home/u/.cache/numfuse");
  CHECK(cache_dir_from(Env{nullptr, nullptr, "/xdg", "/home/u"}) == "/xdg/numfuse");
  CHECK(cache_dir_from(Env{nullptr, "/nf", "/xdg", "/home/u"}) == "/nf");
  CHECK(cache_dir_from(Env{"on", "/nf", "/xdg", "/home/u"}) == "/nf");
  for (const char* off : {"off", "OFF", "0", "false", "no"}) {
    CHECK(cache_dir_from(Env{off, "/nf", "/xdg", "/home/u"}).empty());
  }
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
  const std::optional<StoredKernel> stored = warm.read(nf::jit::image_key(source, "sm_80"));
  REQUIRE(stored);
  CHECK(stored->source == source);
}
