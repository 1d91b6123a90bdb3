// A grid of the statements users write, generated rather than listed:
// patterns x shapes x dtypes (issue 22). The patterns: elementwise over equal
// shapes; a broadcast operand with size-1 axes anywhere, and of lower rank; an
// operand read through a transposed or axis-permuted view; a stepped slice;
// reductions over every axis set, alone and broadcast back. The shapes: each
// size in bytes as rank 1 to 4 with equal dims, with odd dims (not multiples of
// 2, 4 or 32), as tall-skinny, short-wide and one long row, and as seeded
// random dims.
//
// Each row is one JSON line: the bytes the statement must move at the least
// (each input read once, each output written once, and the input read twice
// where a reduction broadcast back cannot keep its slices on chip), the device
// microseconds per call (CUDA events, median of batches after warm-up), the
// achieved GB/s and its ratio to a device-to-device copy of the same bytes
// measured in the same run, the wall microseconds per call (back-to-back calls
// ended by a sync, as the peers are timed) and the kernels the plan takes.
// Each row also names its inputs' shapes and its axes (reduced, or the view's
// permutation): `--list` prints the rows without timing them, on any machine,
// for a peer to run the same grid; with `--signatures`, each row also names
// the signatures of the kernels its statement plans for the target arch
// (NF_TARGET_ARCH, sm_90 by default) and their kernel-cache keys, hashes of
// their sources (a change in how a walk writes its code leaves the
// signatures as they were), so that two builds' lists show which rows a
// change reaches (bench/changed_cases.py). `--cases FILE` takes only the rows
// of the grid that FILE's lines name (work, operand, form, shape and dtype,
// as these rows give them): a change timed where it changes kernels.
// `--seeds S,T,...` takes the union of the grids of several seeds of the
// random shapes (each row once), to measure a class over more shapes.
//
//   sweep_bench [--quick] [--sizes 4M,64M] [--dtypes f32,f16] [--ranks 1,2]
//               [--patterns elementwise,broadcast,...] [--seed S | --seeds S,T]
//               [--list [--signatures]] [--cases FILE]
//
// Sizes take K, M and G suffixes (powers of 1024) and count one input's bytes.
// The whole grid (1 KiB to 1 GiB, four dtypes, ranks 1 to 4) is 7,320 rows,
// an hour or more on a GPU: pick from it. --quick: 64 MiB, f32 and f16, ranks
// 1 to 3 (316 rows).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <numfuse/jit.hpp>
#include <numfuse/numfuse.hpp>

#include "bench_util.hpp"
#include "compile/disk_cache.hpp"
#include "core/storage.hpp"
#include "cuda/devices.hpp"
#include "cuda/memory.hpp"
#include "plan/memory_layout.hpp"

namespace {

// Slices a reduction may hold on chip and broadcast back from in one read: a
// cluster of 8 blocks holding 128 KiB each.
constexpr std::int64_t kOnChipBytes = 8 * 128 * 1024;

struct Options {
  std::vector<std::int64_t> sizes = {1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30};
  std::vector<nf::DType> dtypes = {nf::f32, nf::f16, nf::bf16, nf::f64};
  std::vector<int> ranks = {1, 2, 3, 4};
  std::set<std::string> patterns;  // empty: all
  // The seeds of the random shapes: the grid is the union of each seed's,
  // each row once (the equal and odd shapes are every seed's).
  std::vector<unsigned> seeds = {1};
  bool list = false;        // print the grid's rows, without timing them (no GPU needed)
  bool signatures = false;  // listed rows name their kernels' signatures
  // The rows to take (case_key), where --cases names a file; a file that
  // names none takes none.
  std::optional<std::set<std::string>> cases;
};

// One statement of the grid: the shapes of its inputs (random normal values,
// made when it runs), its expression, and the bytes it must move at the
// least.
struct Case {
  std::string pattern;
  std::string operand;  // what sets it apart within its pattern
  std::vector<nf::Shape> inputs;
  std::function<nf::Expr(const std::vector<nf::Array>&)> expr;
  std::int64_t bytes = 0;
  std::vector<int> axes;  // the reduced axes, or the view's permutation
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::int64_t parse_size(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit = end;
  const std::int64_t scale = unit == "K"   ? 1 << 10
                             : unit == "M" ? 1 << 20
                             : unit == "G" ? 1 << 30
                                           : 1;
  if (v <= 0 || !(unit.empty() || unit == "K" || unit == "M" || unit == "G")) {
    std::fprintf(stderr, "sweep_bench: a size is a number with K, M or G, got \"%s\"\n", s.c_str());
    std::exit(2);
  }
  return std::int64_t(v * double(scale));
}

nf::DType parse_dtype(const std::string& s) {
  for (nf::DType t : {nf::f16, nf::bf16, nf::f32, nf::f64}) {
    if (nf::name(t) == s) return t;
  }
  std::fprintf(stderr, "sweep_bench: dtypes are f16, bf16, f32 and f64, got \"%s\"\n", s.c_str());
  std::exit(2);
}

// Odd: not a multiple of 2, hence of 4 or 32 either.
std::int64_t odd(std::int64_t d) {
  return std::max<std::int64_t>(1, d | 1);
}

// The shapes of `elements` elements (about) at `rank`: equal dims, odd dims;
// at rank 2 also tall-skinny, short-wide and one long row; and seeded random
// dims of that rank.
std::vector<std::pair<std::string, nf::Shape>> shapes_of(std::int64_t elements, int rank,
                                                         std::mt19937& rng) {
  std::vector<std::pair<std::string, nf::Shape>> out;
  const auto side =
      std::max<std::int64_t>(1, std::int64_t(std::llround(std::pow(double(elements), 1.0 / rank))));
  out.push_back({"equal", nf::Shape(rank, side)});
  out.push_back({"odd", nf::Shape(rank, odd(side - 1))});
  if (rank == 2) {
    out.push_back({"tall", {std::max<std::int64_t>(1, elements / 8), 8}});
    out.push_back({"wide", {8, std::max<std::int64_t>(1, elements / 8)}});
    out.push_back({"row", {1, elements}});
  }
  // Random dims: log-uniform shares of the elements' logarithm.
  std::uniform_real_distribution<double> share(0.2, 1.0);
  std::vector<double> w(rank);
  double total = 0;
  for (double& x : w) total += (x = share(rng));
  nf::Shape random(rank);
  for (int a = 0; a < rank; ++a) {
    random[a] = std::max<std::int64_t>(
        1, std::int64_t(std::llround(std::pow(double(elements), w[a] / total))));
  }
  out.push_back({"random", random});
  return out;
}

std::int64_t bytes_of(const nf::Shape& s, nf::DType t) {
  return nf::numel(s) * std::int64_t(nf::itemsize(t));
}

// "0,2": a list of axes or dims as the rows name them.
template <class Int>
std::string joined(const std::vector<Int>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(values[i]);
  }
  return s;
}

std::string axes_name(const std::vector<int>& axes) {
  return "axes " + joined(axes);
}

// Every non-empty set of `rank` axes, as lists; `proper`: not all of them.
std::vector<std::vector<int>> axis_sets(int rank, bool proper) {
  std::vector<std::vector<int>> out;
  for (int mask = 1; mask < (1 << rank) - (proper ? 1 : 0); ++mask) {
    std::vector<int> axes;
    for (int a = 0; a < rank; ++a) {
      if (mask >> a & 1) axes.push_back(a);
    }
    out.push_back(axes);
  }
  return out;
}

// The grid's cases over one shape and dtype, the patterns `want` names.
std::vector<Case> cases_of(const nf::Shape& s, nf::DType t, const std::set<std::string>& want) {
  const auto wanted = [&](const char* p) { return want.empty() || want.count(p); };
  const int rank = int(s.size());
  const std::int64_t x_bytes = bytes_of(s, t);
  // relu(x + c) * 2: the elementwise statement whose operand c varies.
  const auto biased = [](const std::vector<nf::Array>& v) { return nf::relu(v[0] + v[1]) * 2.0f; };
  std::vector<Case> out;
  if (wanted("elementwise")) {
    out.push_back({"elementwise", "same shape", {s, s}, biased, 3 * x_bytes, {}});
  }
  if (wanted("broadcast")) {
    // Size-1 axes anywhere (every proper set of axes longer than 1), then a
    // lower-rank operand: numpy's trailing alignment.
    for (const std::vector<int>& ones : axis_sets(rank, true)) {
      nf::Shape c = s;
      for (int a : ones) c[a] = 1;
      if (c == s) continue;
      out.push_back({"broadcast",
                     "operand " + nf::to_string(c),
                     {s, c},
                     biased,
                     2 * x_bytes + bytes_of(c, t),
                     {}});
    }
    if (rank > 1) {
      const nf::Shape c(s.begin() + 1, s.end());
      out.push_back({"broadcast",
                     "operand " + nf::to_string(c),
                     {s, c},
                     biased,
                     2 * x_bytes + bytes_of(c, t),
                     {}});
    }
  }
  if (wanted("transposed") && rank > 1) {
    // The reversed axes, and (rank 3 and 4) the last two swapped.
    std::vector<std::vector<int>> perms;
    std::vector<int> reverse(rank);
    for (int a = 0; a < rank; ++a) reverse[a] = rank - 1 - a;
    perms.push_back(reverse);
    if (rank > 2) {
      std::vector<int> swap(rank);
      for (int a = 0; a < rank; ++a) swap[a] = a;
      std::swap(swap[rank - 1], swap[rank - 2]);
      perms.push_back(swap);
    }
    for (const std::vector<int>& perm : perms) {
      // x stored so that its view x.transpose(perm) has shape s.
      nf::Shape stored(rank);
      for (int a = 0; a < rank; ++a) stored[perm[a]] = s[a];
      out.push_back({"transposed",
                     "view transpose(" + joined(perm) + ")",
                     {stored, s},
                     [perm](const auto& v) { return v[0].transpose(perm) + v[1]; },
                     3 * x_bytes,
                     perm});
    }
  }
  if (wanted("stepped")) {
    // Every other element along the first axis of an array twice as long.
    nf::Shape twice = s;
    twice[0] *= 2;
    out.push_back({"stepped",
                   "view [::2]",
                   {twice},
                   [](const auto& v) { return v[0](nf::slice(0, nf::none, 2)) * 2.0f; },
                   2 * x_bytes,
                   {}});
  }
  for (const std::vector<int>& axes : axis_sets(rank, false)) {
    nf::Shape kept = s;
    std::int64_t slice = 1;
    for (int a : axes) {
      slice *= s[a];
      kept[a] = 1;
    }
    const nf::Axes ax(axes);
    if (wanted("reduce")) {
      out.push_back({"reduce",
                     "sum " + axes_name(axes),
                     {s},
                     [ax](const auto& v) { return nf::sum(v[0], ax); },
                     x_bytes + bytes_of(kept, t),
                     axes});
    }
    if (wanted("reduce-back")) {
      const bool on_chip = slice * std::int64_t(nf::itemsize(t)) <= kOnChipBytes;
      out.push_back({"reduce-back",
                     "x - mean(x) " + axes_name(axes),
                     {s},
                     [ax](const auto& v) { return v[0] - nf::mean(v[0], ax); },
                     (on_chip ? 2 : 3) * x_bytes,
                     axes});
    }
  }
  return out;
}

// A row's keys, an open JSON object: what identifies the case, the bytes it
// must move, its inputs' shapes and its axes, for the peers to run the same.
std::string row_of(const Case& c, const std::string& form, const nf::Shape& shape, nf::DType t) {
  std::string inputs;
  for (const nf::Shape& in : c.inputs) {
    if (!inputs.empty()) inputs += ',';
    inputs.append("[").append(joined(in)).append("]");
  }
  return "{\"work\":\"" + c.pattern + "\",\"operand\":\"" + c.operand + "\",\"form\":\"" + form +
         "\",\"shape\":\"" + nf::to_string(shape) + "\",\"dtype\":\"" + std::string(nf::name(t)) +
         "\",\"bytes\":" + std::to_string(c.bytes) + ",\"inputs\":[" + inputs + "],\"axes\":[" +
         joined(c.axes) + "]";
}

// The value of `key` in a row's JSON line, where it is a string; "" if none.
std::string string_value(const std::string& row, const std::string& key) {
  const std::string open = "\"" + key + "\":\"";
  std::size_t at = row.find(open);
  if (at == std::string::npos) {
    at = row.find("\"" + key + "\": \"");  // as Python's json writes it
    if (at == std::string::npos) return "";
    at += 1;
  }
  const std::size_t from = row.find('"', at + key.size() + 2) + 1;
  return row.substr(from, row.find('"', from) - from);
}

// What names a row across runs and builds: its work, operand, form, shape and dtype.
std::string case_key(const std::string& row) {
  std::string key;
  for (const char* k : {"work", "operand", "form", "shape", "dtype"}) {
    key += string_value(row, k) + "|";
  }
  return key;
}

std::set<std::string> read_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "sweep_bench: cannot read the cases file \"%s\"\n", path.c_str());
    std::exit(2);
  }
  std::set<std::string> keys;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('{', 0) == 0) keys.insert(case_key(line));
  }
  if (keys.empty()) {
    std::fprintf(stderr, "sweep_bench: the cases file \"%s\" names no rows\n", path.c_str());
  }
  return keys;
}

// The signatures of the kernels a case's statement plans (the line each
// kernel's source opens with) and each one's kernel-cache key (a hash of its
// whole source, `numfuse inspect KEY`), planned without data.
std::string signatures_of(const Case& c, nf::DType t) {
  std::vector<nf::Array> x;
  for (const nf::Shape& in : c.inputs) x.push_back(nf::planned_array(t, in));
  std::string signatures, hashes;
  const auto item = [](const std::string& list, const std::string& text) {
    return list + (list.empty() ? "\"" : ",\"") + text + "\"";
  };
  for (const std::string& source : nf::plan({c.expr(x)}).sources()) {
    hashes = item(hashes, nf::jit::image_key(source, nf::target_arch()));
    const std::string mark = "// signature: ";
    const std::size_t at = source.find(mark);
    if (at == std::string::npos) continue;
    const std::size_t from = at + mark.size();
    signatures = item(signatures, source.substr(from, source.find('\n', from) - from));
  }
  return ",\"signatures\":[" + signatures + "],\"sources\":[" + hashes + "]";
}

// Wall microseconds per call: back-to-back calls ended by a sync, in batches
// of about 20 ms of device time (bench::wall_us takes the median of 9).
double wall_us(const std::function<void()>& f, double device_us) {
  const int calls = std::clamp(int(20000.0 / std::max(device_us, 1.0)), 3, 1000);
  return bench::wall_us(f, calls);
}

std::vector<std::pair<std::string, nf::Shape>> grid_shapes(const Options& o, nf::DType t,
                                                           std::mt19937& rng) {
  std::vector<std::pair<std::string, nf::Shape>> out;
  for (std::int64_t size : o.sizes) {
    const std::int64_t elements = std::max<std::int64_t>(1, size / std::int64_t(nf::itemsize(t)));
    for (int rank : o.ranks) {
      for (auto& shape : shapes_of(elements, rank, rng)) out.push_back(shape);
    }
  }
  return out;
}

// A row of the grid: its statement, its dtype, and its JSON line so far
// (row_of).
struct Row {
  Case c;
  nf::DType dtype;
  std::string text;
};

// The rows of the grid `o` names, and of them those its cases file names:
// each seed's grid in turn, a row an earlier seed's had once.
std::vector<Row> grid_rows(const Options& o) {
  std::vector<Row> rows;
  std::set<std::string> seen;
  for (unsigned seed : o.seeds) {
    std::mt19937 rng(seed);
    for (nf::DType t : o.dtypes) {
      for (const auto& [form, shape] : grid_shapes(o, t, rng)) {
        for (Case& c : cases_of(shape, t, o.patterns)) {
          std::string text = row_of(c, form, shape, t);
          const std::string key = case_key(text);
          if ((o.cases && !o.cases->count(key)) || !seen.insert(key).second) continue;
          rows.push_back({std::move(c), t, std::move(text)});
        }
      }
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--quick") {
      o.sizes = {1 << 26};
      o.dtypes = {nf::f32, nf::f16};
      o.ranks = {1, 2, 3};
    } else if (a == "--sizes" && has_value) {
      o.sizes.clear();
      for (const std::string& s : split(argv[++i])) o.sizes.push_back(parse_size(s));
    } else if (a == "--dtypes" && has_value) {
      o.dtypes.clear();
      for (const std::string& s : split(argv[++i])) o.dtypes.push_back(parse_dtype(s));
    } else if (a == "--ranks" && has_value) {
      o.ranks.clear();
      for (const std::string& s : split(argv[++i])) {
        const int rank = std::atoi(s.c_str());
        if (rank < 1 || rank > 4) {
          std::fprintf(stderr, "sweep_bench: ranks are 1 to 4, got \"%s\"\n", s.c_str());
          return 2;
        }
        o.ranks.push_back(rank);
      }
    } else if (a == "--patterns" && has_value) {
      for (const std::string& s : split(argv[++i])) {
        static const std::set<std::string> known = {"elementwise", "broadcast", "transposed",
                                                    "stepped",     "reduce",    "reduce-back"};
        if (!known.count(s)) {
          std::fprintf(stderr, "sweep_bench: no pattern \"%s\" (see --help)\n", s.c_str());
          return 2;
        }
        o.patterns.insert(s);
      }
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--signatures") {
      o.signatures = true;
    } else if (a == "--cases" && has_value) {
      o.cases = read_cases(argv[++i]);
    } else if ((a == "--seed" || a == "--seeds") && has_value) {
      o.seeds.clear();
      for (const std::string& s : split(argv[++i])) {
        char* end = nullptr;
        const unsigned long seed = std::strtoul(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || s[0] == '-' || seed > 0xffffffffUL) {
          std::fprintf(stderr, "sweep_bench: a seed is a number from 0 to 2^32 - 1, got \"%s\"\n",
                       s.c_str());
          return 2;
        }
        o.seeds.push_back(unsigned(seed));
      }
    } else {
      std::fprintf(stderr,
                   "usage: sweep_bench [--quick] [--sizes 4M,64M] [--dtypes f32,f16] "
                   "[--ranks 1,2] [--patterns elementwise,broadcast,transposed,stepped,reduce,"
                   "reduce-back] [--seed S | --seeds S,T] [--list [--signatures]] "
                   "[--cases FILE]\n");
      return 2;
    }
  }
  if (o.seeds.empty()) {
    std::fprintf(stderr, "sweep_bench: --seeds names no seed\n");
    return 2;
  }
  if (o.signatures && !o.list) {
    std::fprintf(stderr,
                 "sweep_bench: --signatures names the kernels of listed rows: give --list\n");
    return 2;
  }
  if (o.list) {
    const std::vector<Row> rows = grid_rows(o);
    for (const Row& r : rows) {
      std::printf("%s%s}\n", r.text.c_str(),
                  o.signatures ? signatures_of(r.c, r.dtype).c_str() : "");
    }
    std::fprintf(stderr, "sweep_bench: %zu rows\n", rows.size());
    return 0;
  }
  if (nf::cuda::device_count() == 0) {
    std::puts("sweep_bench: no CUDA device");
    return 77;
  }
  const auto& info = nf::cuda::device_info(0);
  std::printf("device: %s (%s, %d SMs)\n", info.name.c_str(), info.arch().c_str(), info.sm_count);
  nf::seed(o.seeds.front());

  // A copy moving the same bytes (read and written), once per byte count.
  std::map<std::int64_t, double> copy_gbps;
  const auto copy_of = [&](std::int64_t bytes) {
    const std::size_t half = std::size_t(std::max<std::int64_t>(bytes / 2, 4));
    auto it = copy_gbps.find(bytes);
    if (it != copy_gbps.end()) return it->second;
    auto a = nf::cuda::allocate_device(0, half), b = nf::cuda::allocate_device(0, half);
    const double us =
        bench::time_us([&] { nf::cuda::copy_device_to_device(b->data, a->data, half, 0); });
    return copy_gbps[bytes] = 2.0 * double(half) / (us * 1e-6) / 1e9;
  };

  int rows = 0;
  for (const Row& r : grid_rows(o)) {
    const Case& c = r.c;
    std::vector<nf::Array> x;
    for (const nf::Shape& in : c.inputs) x.push_back(nf::randn(in, r.dtype));
    const int kernels = nf::plan({c.expr(x)}).kernel_count();
    nf::Array y;
    const double us = bench::time_us([&] { y = c.expr(x); });
    const double wall = wall_us([&] { y = c.expr(x); }, us);
    const double gbps = double(c.bytes) / (us * 1e-6) / 1e9;
    std::printf(
        "%s,\"fw\":\"numfuse\",\"us\":%.2f,\"GBps\":%.1f,\"of_copy\":%.3f,"
        "\"wall_us\":%.2f,\"kernels\":%d}\n",
        r.text.c_str(), us, gbps, gbps / copy_of(c.bytes), wall, kernels);
    std::fflush(stdout);
    ++rows;
  }
  std::fprintf(stderr, "sweep_bench: %d rows\n", rows);
  return 0;
}
