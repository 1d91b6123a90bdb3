// The kernel manifest: records read back as written, damage found, records
// of concurrent writer processes kept whole; and the kernels it would record
// for a statement are those nf::plan shows.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/kernel_sources.hpp"
#include "compile/manifest.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/jit.hpp"
#include "numfuse/numfuse.hpp"
#include "plan/program.hpp"
#include "plan/schedule.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nf::jit::ManifestEntry;

namespace {

fs::path fresh_file(const std::string& name) {
  const fs::path path =
      fs::temp_directory_path() / ("numfuse-manifest-" + std::to_string(::getpid()) + "-" + name);
  fs::remove(path);
  return path;
}

ManifestEntry entry_of(int i) {
  // Sources hold blank lines, record-like lines and every byte value.
  std::string source = "// kernel " + std::to_string(i) + "\n\nnumfuse-kernel 1\nname: x\n";
  for (int b = 0; b < 256; ++b) source += static_cast<char>(b);
  return {"nf_fused_" + std::to_string(i), i % 2 ? "sm_80" : "sm_90",
          "fused;idx32;flat;t0=exp.f32,a0;write:t0", source};
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void check_same(const ManifestEntry& a, const ManifestEntry& b) {
  CHECK(a.name == b.name);
  CHECK(a.arch == b.arch);
  CHECK(a.signature == b.signature);
  CHECK(a.source == b.source);
  CHECK(a.intact);
}

}  // namespace

TEST_CASE("manifest records read back as they were written", "[host][manifest]") {
  const fs::path path = fresh_file("roundtrip");
  for (int i = 0; i < 3; ++i) nf::jit::append_manifest(path, entry_of(i));
  const std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  REQUIRE(read.size() == 3);
  for (int i = 0; i < 3; ++i) check_same(read[i], entry_of(i));
  // A reader can see what a record is.
  const std::string text = read_text(path);
  CHECK(text.rfind("numfuse-kernel 1\nname: nf_fused_0\narch: sm_90\nsignature: fused;", 0) == 0);
  CHECK(text.find("source-xxh64: " + nf::jit::source_hash(entry_of(0).source) + "\n") !=
        std::string::npos);
  fs::remove(path);
}

TEST_CASE("a changed source is read back as damaged; a broken record is an error",
          "[host][manifest]") {
  const fs::path path = fresh_file("damaged");
  nf::jit::append_manifest(path, entry_of(0));
  nf::jit::append_manifest(path, entry_of(1));
  const std::string good = read_text(path);

  // One byte of the first source changed, its length kept.
  std::string text = good;
  text[text.find("// kernel 0") + 3] = 'K';
  write_text(path, text);
  std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  REQUIRE(read.size() == 2);
  CHECK_FALSE(read[0].intact);
  CHECK(read[1].intact);

  // Cut anywhere inside a record, or not a manifest at all: an error naming
  // the file and a line.
  // (Half way is the end of the first record, which reads as a manifest.)
  for (std::size_t cut : {std::size_t(5), std::size_t(40), good.size() / 2 + 9, good.size() - 1}) {
    write_text(path, good.substr(0, cut));
    CHECK_THROWS_AS(nf::jit::read_manifest(path), nf::ValueError);
    CHECK_THROWS_WITH(nf::jit::read_manifest(path),
                      Contains(path.string() + ":") && Contains("not a numfuse kernel manifest"));
  }
  write_text(path,
             "numfuse-kernel 1\nname: a\narch: sm_90\nsignature: s\nsource-xxh64: 0\n"
             "source-bytes: many\n");
  CHECK_THROWS_WITH(nf::jit::read_manifest(path), Contains(":6:") && Contains("many"));
  fs::remove(path);
  CHECK_THROWS_AS(nf::jit::read_manifest(path), nf::ValueError);
}

TEST_CASE("processes appending to one manifest leave whole records", "[host][manifest]") {
  const fs::path path = fresh_file("processes");
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int n = 0; n < 25; ++n) nf::jit::append_manifest(path, entry_of(100 * p + n));
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  const std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  REQUIRE(read.size() == 100);
  std::vector<int> count(4, 0);
  for (const ManifestEntry& e : read) {
    const int i = std::stoi(e.name.substr(std::string("nf_fused_").size()));
    check_same(e, entry_of(i));
    ++count[i / 100];
  }
  CHECK(count == std::vector<int>{25, 25, 25, 25});
  fs::remove(path);
}

TEST_CASE("the kernels recorded for a statement are those the plan shows, per arch",
          "[host][manifest]") {
  nf::seed(5);
  const nf::Array A = nf::randn({300, 1000});
  const nf::Expr ln = reciprocal(sqrt(var(A, 1) + 1e-5f)) * (A - mean(A, 1));
  const nf::Program p = nf::make_program({ln.node()});
  const nf::Schedule s = nf::make_schedule(p, nf::default_schedule_options());
  const std::vector<nf::Array> out = {nf::planned_array(ln.dtype(), ln.shape())};
  const std::string saved = nf::target_arch();
  for (const char* arch : {"sm_80", "sm_90"}) {
    nf::set_target_arch(arch);
    const std::vector<std::string> shown = nf::plan({ln}).sources();
    const std::vector<nf::jit::GeneratedKernel> generated = nf::generate_kernels(p, s, out, arch);
    REQUIRE(generated.size() == shown.size());
    for (std::size_t k = 0; k < shown.size(); ++k) {
      CHECK(generated[k].source == shown[k]);
      CHECK(shown[k].find("// numfuse reduction kernel " + generated[k].name) != std::string::npos);
    }
  }
  nf::set_target_arch(saved);
  // Nothing is launched over an empty domain, so nothing is recorded.
  const nf::Array empty = nf::zeros({0, 4});
  CHECK(nf::plan({nf::exp(empty)}).kernel_count() == 0);
}

TEST_CASE("the target arch is checked", "[host][manifest]") {
  const std::string saved = nf::target_arch();
  CHECK_THROWS_AS(nf::set_target_arch("sm90"), nf::ValueError);
  CHECK_THROWS_WITH(nf::set_target_arch("sm90"), Contains("\"sm90\" is not a GPU architecture"));
  CHECK_THROWS_AS(nf::set_target_arch("compute_90"), nf::ValueError);
  CHECK(nf::target_arch() == saved);
  nf::set_target_arch("sm_90a");
  CHECK(nf::target_arch() == "sm_90a");
  nf::set_target_arch(saved);
}
