// The kernel manifest: records read back as written, damage found, records
// of concurrent writer processes kept whole; and the kernels it would record
// for a statement are those nf::plan shows.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "codegen/step_kernels.hpp"
#include "compile/manifest.hpp"
#include "compile/runtime_source.hpp"
#include "cpu/gpu_kernels.hpp"
#include "numfuse/errors.hpp"
#include "numfuse/jit.hpp"
#include "numfuse/numfuse.hpp"
#include "plan/memory_layout.hpp"
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

// A kernel as codegen makes them: the device runtime, then its own code.
ManifestEntry kernel_of(int i) {
  ManifestEntry e = entry_of(i);
  e.source = std::string(nf::jit::runtime_prelude()) + "\n" + e.source;
  return e;
}

// Runs append(p) for p in [0, n) in n child processes at once, as other
// runs of a program would, and waits for all.
template <class F>
void in_processes(int n, F&& append) {
  std::vector<pid_t> children;
  for (int p = 0; p < n; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      append(p);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
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
  CHECK(text.rfind("numfuse-kernel 2\nname: nf_fused_0\narch: sm_90\nsignature: fused;", 0) == 0);
  CHECK(text.find("runtime-xxh64: none\n") != std::string::npos);
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
  in_processes(4, [&](int p) {
    for (int n = 0; n < 25; ++n) nf::jit::append_manifest(path, entry_of(100 * p + n));
  });
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

TEST_CASE("a manifest keeps one record per kernel across runs and processes", "[host][manifest]") {
  const fs::path path = fresh_file("dedup");
  // Three runs of one program, each in its own process, record the same
  // kernels; the third adds one.
  for (int run = 0; run < 3; ++run) {
    in_processes(1, [&](int) {
      for (int i = 0; i < 5 + (run == 2); ++i) nf::jit::append_manifest(path, kernel_of(i));
    });
  }
  // Four processes at once, the same kernels and one of their own each.
  in_processes(4, [&](int p) {
    for (int i = 0; i < 8; ++i) nf::jit::append_manifest(path, kernel_of(i));
    nf::jit::append_manifest(path, kernel_of(100 + p));
  });
  const std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  std::multiset<std::string> names;
  for (const ManifestEntry& e : read) {
    const int i = std::stoi(e.name.substr(std::string("nf_fused_").size()));
    check_same(e, kernel_of(i));
    names.insert(e.name);
  }
  CHECK(read.size() == 8 + 4);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  // In this process too: a kernel already there is not appended again.
  CHECK_FALSE(nf::jit::append_manifest(path, kernel_of(3)));
  CHECK(nf::jit::append_manifest(path, kernel_of(200)));
  CHECK(nf::jit::read_manifest(path).size() == 13);
  // The same source for another arch is another kernel.
  ManifestEntry other_arch = kernel_of(3);
  other_arch.arch = "sm_120";
  CHECK(nf::jit::append_manifest(path, other_arch));
  fs::remove(path);
}

TEST_CASE("a manifest stores the device runtime once, however many kernels start with it",
          "[host][manifest]") {
  const fs::path path = fresh_file("runtime");
  const std::size_t runtime = nf::jit::runtime_prelude().size();
  REQUIRE(runtime > 10000);
  for (int i = 0; i < 20; ++i) nf::jit::append_manifest(path, kernel_of(i));
  nf::jit::append_manifest(path, entry_of(50));  // a source without the runtime
  const std::string text = read_text(path);
  CHECK(count_of(text, "\nnumfuse-kernel 2\n") + text.starts_with("numfuse-kernel 2\n") == 21);
  CHECK(count_of(text, "numfuse-runtime 2\n") == 1);
  CHECK(text.size() < runtime + 21 * 1000);
  const std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  REQUIRE(read.size() == 21);
  for (int i = 0; i < 20; ++i) check_same(read[i], kernel_of(i));
  check_same(read[20], entry_of(50));

  // A kernel whose runtime record is gone cannot be read back whole.
  const std::size_t kernels = text.find("numfuse-kernel 2\n");
  write_text(path, text.substr(kernels));
  CHECK_THROWS_WITH(nf::jit::read_manifest(path),
                    Contains("starts with the runtime") && Contains("which no record before it"));
  fs::remove(path);
}

TEST_CASE("manifests of version 1, each source whole, are still read", "[host][manifest]") {
  const fs::path path = fresh_file("v1");
  const ManifestEntry old = kernel_of(7);
  write_text(path, "numfuse-kernel 1\nname: " + old.name + "\narch: " + old.arch + "\nsignature: " +
                       old.signature + "\nsource-xxh64: " + nf::jit::source_hash(old.source) +
                       "\nsource-bytes: " + std::to_string(old.source.size()) + "\n" + old.source +
                       "\n");
  REQUIRE(nf::jit::read_manifest(path).size() == 1);
  check_same(nf::jit::read_manifest(path)[0], old);
  // Appending to it in version 2 skips the kernel it holds.
  CHECK_FALSE(nf::jit::append_manifest(path, old));
  CHECK(nf::jit::append_manifest(path, kernel_of(8)));
  const std::vector<ManifestEntry> read = nf::jit::read_manifest(path);
  REQUIRE(read.size() == 2);
  check_same(read[1], kernel_of(8));
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
    const std::vector<nf::jit::GeneratedKernel> generated = nf::jit::plan_kernels(p, s, out, arch);
    REQUIRE(generated.size() == shown.size());
    for (std::size_t k = 0; k < shown.size(); ++k) {
      CHECK(generated[k].source == shown[k]);
      CHECK(shown[k].find("// numfuse reduction kernel " + generated[k].name) != std::string::npos);
    }
  }
  // A CPU run records what a GPU runs, though the CPU runs it otherwise: a
  // reduction the GPU's program cuts in two (plan/reduction_cut.hpp).
  const nf::Expr x = nf::planned_array(nf::f16, {323, 323, 323});
  const nf::Expr cut = nf::sum(x, {0, 2});
  const std::vector<nf::Array> cut_out = {nf::planned_array(cut.dtype(), cut.shape())};
  const std::vector<nf::jit::GeneratedKernel> recorded =
      nf::cpu::gpu_kernels(nf::make_program({cut.node()}), cut_out);
  const std::vector<std::string> cut_shown = nf::plan({cut}).sources();
  REQUIRE(recorded.size() == cut_shown.size());
  CHECK(recorded.size() == 3);
  for (std::size_t k = 0; k < recorded.size(); ++k) CHECK(recorded[k].source == cut_shown[k]);
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
