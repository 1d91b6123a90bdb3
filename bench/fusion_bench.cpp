// The fusion suite: numfuse on the workloads the peer benchmark times in
// PyTorch, torch.compile, CuPy and JAX (shared/bench/peer_bench.py, and our
// own bench/peers.py), with the same formulas, shapes and byte or flop counts,
// each fused ("numfuse") and with one kernel per op ("numfuse-unfused",
// NF_FUSION=off), beside the device-to-device copy as the bandwidth ceiling.
// Device time by CUDA events, after warm-up, the median of repeated batches
// (bench_util.hpp). GB/s count each input read once and each output written
// once; TFLOP/s count a product's 2*m*k*n.
//
// Also:
//  - "<work>-wall": the host's wall clock per call of the warm statement on
//    the small shape of layernorm, softmax, chain8 and adam, where the host,
//    not the device, sets the pace (and parts of that cost for chain8);
//  - "<work>-prebuilt-wall": the same statement built once and run again
//    and again, without the host's building of it;
//  - "<work>-recorded-wall", "<work>-recorded-10-wall": the statement
//    recorded once (numfuse/record.hpp) and replayed, one statement a replay
//    and ten (as a loop's step holds several); µs per statement;
//  - "launch-empty-wall", "launch-empty-early-wall": an empty kernel launched
//    back to back, the floor under every wall figure, and "…-issue": the
//    host's part of it, the launch call alone;
//  - "<work>-first-use": for each kernel the statement plans, what its first
//    use in a process costs: NVRTC compiling it (cold), or the disk cache's
//    key and checked read ("disk_read_ms") and the module load (warm);
// and "nvrtc-first-compile", the process's first compile, NVRTC's start-up
// included, and "nvrtc", the compiles the timed statements made.
//
// Every figure is a JSON line on stdout (and in --json's file); a table
// closes the run. Shapes print as Python prints the tuple, "(8192, 8192)",
// "(1048576,)", so that rows join the peers'.
//
//   fusion_bench [--quick] [--work layernorm,softmax,...] [--json FILE]
//
// --quick runs layernorm and softmax on two shapes, as peer_bench.py --quick.
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "bench_util.hpp"
#include "compile/disk_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/kernels.hpp"
#include "cuda/memory.hpp"
#include "workloads.hpp"

namespace {

// ------------------------------------------------------------------ output

// One JSON object on one line, fields in the order added.
class Json {
 public:
  Json& str(const char* key, const std::string& value) {
    std::string quoted;
    for (char c : value) {
      if (c == '"' || c == '\\') {
        quoted.append(1, '\\').append(1, c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        quoted += escaped;
      } else {
        quoted += c;
      }
    }
    return field(key, "\"" + quoted + "\"");
  }
  Json& num(const char* key, double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return field(key, text);
  }
  Json& num(const char* key, long long value) { return field(key, std::to_string(value)); }
  std::string line() const { return "{" + body_ + "}"; }

 private:
  Json& field(const char* key, const std::string& value) {
    if (!body_.empty()) body_ += ",";
    body_.append("\"").append(key).append("\":").append(value);
    return *this;
  }
  std::string body_;
};

// A row of the closing table: device time and its rate.
struct Row {
  std::string work, shape, fw, note;
  double us;
  double rate;
  bool tflops = false;  // rate in TFLOP/s, else GB/s
};

// Where the figures go: JSON lines to stdout and to --json's file, and the
// rows with a rate kept for the table.
class Report {
 public:
  explicit Report(const std::string& json_path) {
    if (json_path.empty()) return;
    file_ = std::fopen(json_path.c_str(), "w");
    if (!file_) {
      std::fprintf(stderr, "fusion_bench: cannot write %s\n", json_path.c_str());
      std::exit(2);
    }
  }
  ~Report() {
    if (file_) std::fclose(file_);
  }
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  void emit(const Json& j) {
    const std::string line = j.line();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (file_) std::fprintf(file_, "%s\n", line.c_str());
  }

  // {"work","shape","fw","us","GBps"|"TFLOPs"[,"note"]}, as peer_bench.py writes.
  void timed(const Row& r) {
    rows_.push_back(r);
    Json j;
    j.str("work", r.work).str("shape", r.shape).str("fw", r.fw).num("us", r.us, 2);
    if (r.tflops) {
      j.num("TFLOPs", r.rate, 2);
    } else {
      j.num("GBps", r.rate, 1);
    }
    if (!r.note.empty()) j.str("note", r.note);
    emit(j);
  }

  // A host-side figure: microseconds per call, no rate.
  void host(const std::string& work, const std::string& shape, double us) {
    emit(Json().str("work", work).str("shape", shape).str("fw", "numfuse").num("us", us, 2));
  }

  void print_table() const {
    double copy_gbps = 0;
    for (const Row& r : rows_) {
      if (r.work == "copy") copy_gbps = r.rate;
    }
    std::printf("\n%-13s %-20s %-16s %-5s %10s %10s %-7s %7s\n", "work", "shape", "fw", "note",
                "us", "rate", "unit", "of copy");
    for (const Row& r : rows_) {
      std::printf("%-13s %-20s %-16s %-5s %10.2f %10.2f %-7s ", r.work.c_str(), r.shape.c_str(),
                  r.fw.c_str(), r.note.c_str(), r.us, r.rate, r.tflops ? "TFLOP/s" : "GB/s");
      if (r.tflops || copy_gbps == 0) {
        std::printf("%7s\n", "-");
      } else {
        std::printf("%6.1f%%\n", 100 * r.rate / copy_gbps);
      }
    }
  }

 private:
  std::FILE* file_ = nullptr;
  std::vector<Row> rows_;
};

// --------------------------------------------------------------- workloads

// One statement on one shape: what a row times.
struct Case {
  std::string shape;                               // Python's str() of the peer's tuple
  std::function<std::vector<nf::Expr>()> results;  // builds the statement
  double bytes = 0;  // GB/s rows: each input read once, each output written once
  double flops = 0;  // TFLOP/s rows
  std::string note = {};
  // A product keeps the precision it was built with, so the statement is
  // built under this one.
  nf::MatmulPrecision precision = nf::MatmulPrecision::f32;
};

struct Workload {
  std::string name;
  std::vector<nf::Shape> shapes;
  std::vector<nf::Shape> quick_shapes;  // empty: the same as `shapes`
  std::function<std::vector<Case>(const nf::Shape&)> cases;
  nf::Shape wall_shape = {};  // the shape of its "-wall" row; empty: none
};

nf::Expr layernorm(const nf::Array& A) {
  const float eps = 1e-5f;
  return nf::reciprocal(nf::sqrt(nf::var(A, 1) + eps)) * (A - nf::mean(A, 1));
}

nf::Expr softmax(const nf::Array& A) {
  const nf::Expr e = nf::exp(A - nf::max(A, 1));
  return e / nf::sum(e, 1);
}

// A statement reading one randn array of the shape and writing one like it.
std::function<std::vector<Case>(const nf::Shape&)> one_array(
    std::function<nf::Expr(const nf::Array&)> formula) {
  return [formula](const nf::Shape& s) {
    const nf::Array x = nf::randn(s);
    return std::vector<Case>{{nf::to_string(s),
                              [formula, x] { return std::vector<nf::Expr>{formula(x)}; },
                              2.0 * 4 * double(x.size())}};
  };
}

// One Adam step over n parameters: reads p, g, m, v and writes p, m, v.
std::vector<Case> adam(const nf::Shape& s) {
  const nf::Array p = nf::randn(s), g = nf::randn(s), m = nf::randn(s), v = nf::rand(s);
  const auto step = [=] {
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const nf::Expr m2 = b1 * m + (1 - b1) * g;
    const nf::Expr v2 = b2 * v + (1 - b2) * g * g;
    return std::vector<nf::Expr>{p - lr * m2 / (nf::sqrt(v2) + eps), m2, v2};
  };
  return {{nf::to_string(s), step, 7.0 * 4 * double(p.size())}};
}

// An RBM's up-pass, shape (batch, visible, hidden): the hidden units'
// probabilities and a 0/1 sample of them, both written, as the peers return
// both.
std::vector<Case> rbm_up(const nf::Shape& s) {
  const std::int64_t b = s[0], nv = s[1], nh = s[2];
  const nf::Array v = nf::rand({b, nv});
  const nf::Array W = nf::randn({nv, nh}) * 0.1f;
  const nf::Array bh = nf::randn({1, nh});
  const auto up = [=] {
    const nf::Expr h = nf::sigmoid(nf::dot(v, W) + bh);
    return std::vector<nf::Expr>{nf::astype(nf::rand_like(h) < h, nf::f32), h};
  };
  return {{nf::to_string(s), up, 0, 2.0 * double(b) * double(nv) * double(nh)}};
}

// cudamat's product, shape (m, k, n), in full f32 and in TF32.
std::vector<Case> gemm_cudamat(const nf::Shape& s) {
  const nf::Array A = nf::randn({s[0], s[1]}), B = nf::randn({s[1], s[2]});
  const double flops = 2.0 * double(s[0]) * double(s[1]) * double(s[2]);
  std::vector<Case> cases;
  for (const auto& [precision, note] : {std::pair{nf::MatmulPrecision::f32, "fp32"},
                                        std::pair{nf::MatmulPrecision::tf32, "tf32"}}) {
    cases.push_back({nf::to_string(s), [A, B] { return std::vector<nf::Expr>{nf::dot(A, B)}; }, 0,
                     flops, note, precision});
  }
  return cases;
}

// numpy's take of an array's rows (axis 0) or columns (axis 1) in a random
// order, as a shuffle of a data set reads them, in f32 and in the widths
// either side of it (a byte, a half, a double), since a row's width in bytes
// decides how the kernel copies it; in clip mode, so that the statement timed
// is the gather alone, without the read back of raise.
std::function<std::vector<Case>(const nf::Shape&)> take_along(int axis) {
  return [axis](const nf::Shape& s) {
    const nf::Array order = nf::permutation(s[std::size_t(axis)]);
    std::vector<Case> cases;
    for (const nf::DType t : {nf::f32, nf::f16, nf::f64, nf::u8}) {
      const nf::Array x = nf::astype(nf::rand(s) * 200.0f, t);
      const auto take = [x, order, axis] {
        return std::vector<nf::Expr>{nf::take(x, order, axis, nf::TakeMode::clip)};
      };
      const double bytes = 2.0 * double(nf::itemsize(t)) * double(x.size());
      cases.push_back({nf::to_string(s), take, bytes + 8.0 * double(order.size()), 0,
                       std::string(nf::name(t))});
    }
    return cases;
  };
}

// The workloads and shapes of peer_bench.py, in its order, then numfuse's own.
std::vector<Workload> workloads() {
  const std::vector<nf::Shape> rows = {
      {128, 784}, {4096, 4096}, {8192, 8192}, {32768, 1024}, {1024, 32768}};
  const std::vector<nf::Shape> rows_quick = {{128, 784}, {8192, 8192}};
  const nf::Shape small = {128, 784};
  return {
      {"scale_copy", {{8192, 8192}}, {}, one_array([](const nf::Array& x) { return x * 1.0f; })},
      {"layernorm", rows, rows_quick, one_array(layernorm), small},
      {"softmax", rows, rows_quick, one_array(softmax), small},
      {"chain8",
       {{128, 784}, {8192, 8192}},
       {},
       one_array([](const nf::Array& x) { return bench::chain(x, 1.5f, 0.25f); }),
       small},
      {"adam", {{1 << 20}, {1 << 26}}, {}, adam, {1 << 20}},
      {"rbm_up", {{128, 784, 4096}, {256, 2048, 4096}}, {}, rbm_up},
      {"gemm_cudamat", {{2000, 40000, 2000}}, {}, gemm_cudamat},
      {"take_rows",
       {{60000, 784}, {1 << 20, 64}, {8192, 8192}, {1 << 16, 333}, {1 << 22, 3}},
       {},
       take_along(0)},
      {"take_cols", {{8192, 8192}, {784, 60000}}, {}, take_along(1)},
  };
}

// --------------------------------------------------------------- measuring

// Runs a statement once: one result is written into the buffer out[0]
// already holds (as `y = e;` in a loop does); several go through nf::eval,
// which makes new arrays.
void run_built(const std::vector<nf::Expr>& results, std::vector<nf::Array>& out) {
  if (results.size() == 1) {
    out.resize(1);
    out[0] = results[0];
  } else {
    out = nf::eval(results);
  }
}

// The same, building the statement first, as a loop of statements does.
void run_statement(const Case& c, std::vector<nf::Array>& out) {
  run_built(c.results(), out);
}

void time_fused_and_unfused(Report& report, const std::string& work, const Case& c) {
  std::vector<nf::Array> out;
  const auto row = [&](const char* fw) {
    const double us = bench::time_us([&] { run_statement(c, out); });
    const double rate = c.flops > 0 ? c.flops / (us * 1e-6) / 1e12 : c.bytes / (us * 1e-6) / 1e9;
    report.timed({work, c.shape, fw, c.note, us, rate, c.flops > 0});
  };
  row("numfuse");
  setenv("NF_FUSION", "off", 1);
  row("numfuse-unfused");
  unsetenv("NF_FUSION");
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A directory of its own under the system's temporary directory, removed
// with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "fusion_bench-XXXXXX").string();
    if (!mkdtemp(name.data())) {
      std::perror("fusion_bench: mkdtemp");
      std::exit(1);
    }
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The kernels one case plans, kept for the first-use rows after the timings.
struct PlannedKernels {
  std::string work, shape;
  std::vector<std::string> sources;
};

// A kernel's first use in a process, into j: NVRTC compiling its source
// (cold), or, once the disk cache holds its image, the cache's key and
// checked read plus loading the module (warm).
void time_first_use(Json& j, const std::string& source, const std::string& arch,
                    nf::jit::DiskCache& cache) {
  auto t0 = std::chrono::steady_clock::now();
  nf::jit::KernelImage image = nf::jit::compile(source, arch);
  j.num("nvrtc_ms", ms_since(t0), 1);

  nf::jit::obtain_image(source, arch, cache);  // stores it
  t0 = std::chrono::steady_clock::now();
  const std::optional<nf::jit::KernelImage> stored = cache.load(nf::jit::image_key(source, arch));
  const double read_ms = ms_since(t0);
  if (stored) {
    j.num("disk_read_ms", read_ms, 3);
    image = *stored;
  } else {
    j.str("disk", "off");
  }

  t0 = std::chrono::steady_clock::now();
  const nf::cuda::LoadedKernel loaded = nf::cuda::load_kernel(
      0, image.data.data(), image.data.size(), nf::jit::kernel_name_of(source).c_str());
  j.num("load_ms", ms_since(t0), 3);
  nf::cuda::unload_kernel(loaded);
}

// One row per kernel a case plans; a kernel that fails says why in its row.
void first_use(Report& report, const PlannedKernels& k, const std::string& arch,
               nf::jit::DiskCache& cache) {
  for (std::size_t i = 0; i < k.sources.size(); ++i) {
    Json j;
    j.str("work", k.work + "-first-use").str("shape", k.shape).str("fw", "numfuse");
    j.num("kernel", static_cast<long long>(i)).str("name", nf::jit::kernel_name_of(k.sources[i]));
    try {
      time_first_use(j, k.sources[i], arch, cache);
    } catch (const std::exception& e) {
      j.str("error", e.what());
    }
    report.emit(j);
  }
}

// NVRTC's first compile in the process, its own start-up included: what a
// program's first kernel costs beyond the compile of later ones. Nothing has
// compiled before it (an empty array and a plan compile nothing).
void first_compile(Report& report, const std::string& arch) {
  const nf::Array x = nf::empty({1024});
  const std::string source = nf::plan({x * 1.0f}).sources().at(0);
  const auto t0 = std::chrono::steady_clock::now();
  nf::jit::compile(source, arch);
  report.emit(Json()
                  .str("work", "nvrtc-first-compile")
                  .str("fw", "numfuse")
                  .num("nvrtc_ms", ms_since(t0), 1));
}

// Parts of the host's cost of a warm statement on a small matrix: a new
// array each call (as `Array t = ...` does) rather than writing into y's
// buffer; building the expression alone; a one-op statement; and an array's
// allocation alone.
void chain8_host_parts(Report& report) {
  const nf::Array x = nf::randn({128, 784});
  nf::Array y = bench::chain(x, 1.5f, 0.25f);
  nf::cuda::synchronize(0);
  const std::string shape = "(128, 784)";
  report.host("chain8-new-array-wall", shape,
              bench::wall_us([&] { nf::Array t = bench::chain(x, 1.5f, 0.25f); }));
  report.host("chain8-build-only", shape,
              bench::wall_us([&] { nf::Expr e = bench::chain(x, 1.5f, 0.25f); }));
  report.host("chain8-issue", shape, bench::issue_us([&] { y = bench::chain(x, 1.5f, 0.25f); }));
  report.host("scale-wall", shape, bench::wall_us([&] { y = x * 2.0f; }));
  report.host("scale-issue", shape, bench::issue_us([&] { y = x * 2.0f; }));
  report.host("alloc-free", shape, bench::wall_us([&] { nf::Array t = nf::empty({128, 784}); }));
}

// The floor under a warm statement's wall time: a kernel that does nothing,
// launched back to back as a statement's kernel is, through the driver's
// cuLaunchKernel ("launch-empty-wall") and early, waiting for the one ahead
// as generated kernels do ("launch-empty-early-wall").
void launch_floor(Report& report, const std::string& arch) {
  const std::string source =
      "extern \"C\" __global__ void nf_empty() {\n"
      "#if __CUDA_ARCH__ >= 900\n"
      "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
      "#endif\n"
      "}\n";
  const nf::jit::KernelImage image = nf::jit::compile(source, arch);
  nf::cuda::LoadedKernel k =
      nf::cuda::load_kernel(0, image.data.data(), image.data.size(), "nf_empty");
  const auto launch = [&] { nf::cuda::launch(k, 0, dim3(1), dim3(32), nullptr, 0); };
  for (const bool early : {false, true}) {
    k.launch_early = early;
    const std::string name = early ? "launch-empty-early" : "launch-empty";
    report.host(name + "-wall", "()", bench::wall_us(launch));
    report.host(name + "-issue", "()", bench::issue_us(launch));
  }
  nf::cuda::unload_kernel(k);
}

// The ceiling: a device-to-device copy of 256 MiB, bytes read plus written.
void copy_ceiling(Report& report) {
  const std::size_t bytes = std::size_t(8192) * 8192 * 4;
  auto a = nf::cuda::allocate_device(0, bytes), b = nf::cuda::allocate_device(0, bytes);
  const double us =
      bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, bytes, 0); });
  report.timed({"copy", "(8192, 8192)", "cudaMemcpy", "", us, 2.0 * bytes / (us * 1e-6) / 1e9});
}

// The wall clock per statement of a case recorded and replayed, `n`
// statements a recording, each into arrays of its own made before it.
double recorded_wall_us(const Case& c, int n) {
  const std::vector<nf::Expr> built = c.results();
  std::vector<std::vector<nf::Array>> outs(n);
  for (auto& out : outs) run_built(built, out);
  const nf::Recording recorded = nf::record([&] {
    for (auto& out : outs) run_built(built, out);
  });
  return bench::wall_us([&] { recorded.replay(); }) / n;
}

// Times each case of a workload on each of its shapes, fused and unfused,
// and the host's wall clock on its small shape; keeps the kernels each case
// plans for the first-use rows.
void run_workload(Report& report, const Workload& w, bool quick,
                  std::vector<PlannedKernels>& planned) {
  quick = quick && !w.quick_shapes.empty();
  for (const nf::Shape& shape : quick ? w.quick_shapes : w.shapes) {
    for (const Case& c : w.cases(shape)) {
      nf::set_matmul_precision(c.precision);
      time_fused_and_unfused(report, w.name, c);
      if (shape == w.wall_shape) {
        std::vector<nf::Array> out;
        report.host(w.name + "-wall", c.shape, bench::wall_us([&] { run_statement(c, out); }));
        // Without building it: what the host's build costs of the wall.
        const std::vector<nf::Expr> built = c.results();
        report.host(w.name + "-prebuilt-wall", c.shape,
                    bench::wall_us([&] { run_built(built, out); }));
        report.host(w.name + "-recorded-wall", c.shape, recorded_wall_us(c, 1));
        report.host(w.name + "-recorded-10-wall", c.shape, recorded_wall_us(c, 10));
      }
      planned.push_back({w.name, c.shape, nf::plan(c.results()).sources()});
    }
  }
  nf::set_matmul_precision(nf::MatmulPrecision::f32);
}

// ----------------------------------------------------------------- options

struct Options {
  bool quick = false;
  std::set<std::string> works;  // empty: all
  std::string json;
  bool selected(const std::string& work) const { return works.empty() || works.count(work); }
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fusion_bench: %s\nusage: fusion_bench [--quick] [--work a,b] [--json FILE]\n",
               why.c_str());
  std::exit(2);
}

Options parse_options(int argc, char** argv, const std::vector<Workload>& all) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      o.quick = true;
    } else if ((arg == "--work" || arg == "--json") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--json") {
        o.json = value;
        continue;
      }
      std::stringstream list(value);
      for (std::string w; std::getline(list, w, ',');) o.works.insert(w);
    } else {
      usage("unknown argument " + arg);
    }
  }
  for (const std::string& w : o.works) {
    bool known = false;
    for (const Workload& k : all) known = known || k.name == w;
    if (!known) usage("unknown workload " + w);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Workload> all = workloads();
  const Options options = parse_options(argc, argv, all);
  if (nf::cuda::device_count() == 0) {
    std::puts("fusion_bench: no CUDA device");
    return 77;
  }
  const auto& info = nf::cuda::device_info(0);
  std::printf("device: %s (%s, %d SMs)\n", info.name.c_str(), info.arch().c_str(), info.sm_count);
  Report report(options.json);
  report.emit(Json()
                  .str("work", "device")
                  .str("name", info.name)
                  .str("arch", info.arch())
                  .num("sm_count", static_cast<long long>(info.sm_count)));
  nf::seed(1);

  first_compile(report, info.arch());
  const nf::jit::CompileStats before = nf::jit::compile_stats();
  copy_ceiling(report);
  std::vector<PlannedKernels> planned;
  for (const Workload& w : all) {
    if (options.selected(w.name)) run_workload(report, w, options.quick, planned);
  }
  if (options.selected("chain8")) {
    chain8_host_parts(report);
    launch_floor(report, info.arch());
  }

  // NVRTC's work for the statements above, fused and unfused, the inputs'
  // random fills included.
  const nf::jit::CompileStats after = nf::jit::compile_stats();
  const auto compiles = static_cast<long long>(after.compiles - before.compiles);
  report.emit(
      Json()
          .str("work", "nvrtc")
          .num("compiles", compiles)
          .num("ms_per_compile", compiles ? (after.ms - before.ms) / double(compiles) : 0.0, 1));
  {
    const TempDir dir;
    nf::jit::DiskCache cache(dir.path());
    for (const PlannedKernels& k : planned) first_use(report, k, info.arch(), cache);
  }

  report.print_table();
  return 0;
}
